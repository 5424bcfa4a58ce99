"""The CPU identity in a run's store key and the report (benchkit/store/hardware.py)."""
from __future__ import annotations

from benchkit.store import hardware

X86 = """processor	: 0
vendor_id	: GenuineIntel
model name	: Intel(R) Xeon(R) Processor
flags		: fpu vme sse4_2 avx hypervisor avx2 fma avx512f amx_tile constant_tsc
processor	: 1
model name	: Intel(R) Xeon(R) Processor
flags		: fpu vme sse4_2 avx avx2 fma avx512f amx_tile constant_tsc
"""

ARM = """processor	: 0
BogoMIPS	: 50.00
Features	: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics fphp asimdhp sve bf16 i8mm
CPU implementer	: 0x41
"""


def test_the_model_and_the_dispatch_flags_in_a_fixed_order():
    assert hardware.describe(X86) == ("Intel(R) Xeon(R) Processor "
                                      "(sse4_2 avx avx2 fma avx512f amx_tile)")


def test_flags_that_do_not_choose_kernels_are_left_out():
    """hypervisor, constant_tsc, ... change with the kernel or the VM, not with the bits."""
    assert hardware.describe(X86) == hardware.describe(
        X86.replace(" hypervisor", "").replace(" constant_tsc", " nonstop_tsc"))
    assert hardware.describe(X86) != hardware.describe(X86.replace(" avx512f", "", 1))


def test_arm_features_without_a_model_name():
    described = hardware.describe(ARM)
    assert described.endswith("(asimd asimdhp sve bf16 i8mm)")


def test_no_cpuinfo_still_names_something():
    assert hardware.describe("")


def test_this_machine():
    assert hardware.cpu() == hardware.cpu() and hardware.cpu()
