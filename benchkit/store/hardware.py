"""Which CPU a run trained on, as far as its numbers can depend on it.

torch's CPU kernels (ATen, MKL, oneDNN) pick their code path by the instruction sets the CPU
offers, so the same seed can give different bits on different CPUs (same torch, numpy and
Python). So the CPU model and those instruction sets name the folder a stored run is filed
under (a session reuses only its own CPU type's records; only ``--bench-shard merge`` collects
other CPUs' runs, and the report names each run's CPU) and are part of the report's
environment. Read from /proc/cpuinfo without importing torch: keying a stored run must
stay cheap.
"""
from __future__ import annotations

import functools
import platform

# the instruction-set flags the kernels dispatch on (x86 and Arm names as /proc/cpuinfo has them)
SIMD_FLAGS = ("sse4_2", "avx", "avx2", "fma", "f16c", "avx_vnni", "avx512f", "avx512dq",
              "avx512bw", "avx512vl", "avx512_vnni", "avx512_bf16", "avx512_fp16", "amx_tile",
              "amx_bf16", "amx_int8", "asimd", "asimdhp", "sve", "sve2", "bf16", "i8mm")


@functools.lru_cache(maxsize=1)
def cpu() -> str:
    """E.g. ``Intel(R) Xeon(R) Processor (sse4_2 avx avx2 fma f16c avx512f ...)``."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            return describe(f.read())
    except OSError:
        return describe("")


def describe(cpuinfo: str) -> str:
    """The model and the dispatch-relevant flags of the first CPU in a /proc/cpuinfo text."""
    model: str | None = None
    flags: set[str] = set()
    for line in cpuinfo.splitlines():
        name, _, value = line.partition(":")
        name = name.strip().lower()
        if model is None and name in ("model name", "cpu model", "hardware"):
            model = value.strip()
        elif not flags and name in ("flags", "features"):
            flags = set(value.split())
    model = model or platform.processor() or platform.machine() or "unknown"
    present = [flag for flag in SIMD_FLAGS if flag in flags]
    return f"{model} ({' '.join(present)})" if present else model
