"""Moment-preserving rank-2 compression of the GRU hidden state.

Claim. After every GRU step, view the 64-d hidden state h as an 8x8 matrix and store it as its
rank-2 factors plus a 4-coefficient cubic correction: at most 38 numbers instead of 64. The
decoded state keeps four moments of h's entries (mean, variance, third and fourth central
moments) wherever the correction has a solution, and the compressed recurrence predicts the
dynamics no worse than the plain GRU (non-inferiority, margin 10% of the baseline's MSE).

Encoding (`encode`): L = the truncated-SVD rank-2 approximation of h, stored as U*S (8x2) and V
(8x2), 32 numbers; z = L's entries standardised; the cubic p(z) = a + b z + c z^2 + d z^3 whose
values have h's four moments (Newton on the three central-moment equations from the linear map
b = sd(h), c = d = 0, which already matches mean and variance; a then fixes the mean), 4
numbers. Total STORED = 36 <= 38. Where Newton does not converge (no real cubic, or not from
that start), or its cubic's decoded values lose the moments (coefficients so large that
evaluating them cancels), the linear map is stored instead: mean and variance kept, the third
and fourth moments not; `cubic_solved_fraction` logs how often the cubic was found, and the
signature counts only those states. Decoding (`decode`) rebuilds L from its factors and applies p.

Training passes gradients straight through the compression (h + (decode(encode(h)) - h)
.detach()): the forward pass uses the stored state only, the backward pass treats compression
as the identity (no SVD backward through repeated singular values, no Newton backward).

Controls: plain rank-2 (the 32 factors, no correction) and a GRU whose state has 36 numbers
(the stored size). Budgets: the weights differ for the small GRU and the stored state differs
from the baseline's by design; both are waived with that reason and shown in the report.

Signatures, on the trained model over every step of the first SIGNATURE_WINDOWS = 1,000 test
sequences (16,000 states, at a tenth of the cost of the whole split; the forecast error is
scored on the whole split). `moment_residual`:
the largest |m_k(decoded) - m_k(h)| / sd(h)^k (k = 1..4) over the states whose cubic was solved,
predicted 0 within 1e-3. It checks the decoding only: "solved" already means a residual under
1e-6. `moments_kept_fraction`: the share of all non-degenerate states, solved or not, whose
decoded state keeps the four moments within 1e-3, predicted 1 within 0.05. It fails when the
trained model's states often admit no cubic, a property of what training made, not of the
decoder. Null of both: the same statistic for the uncorrected rank-2 state. (A random
permutation of h is no null for this claim: it keeps every moment, which is why the earlier
permutation-based version of this idea confirmed nothing; a null must be a compressor.)

What the signature cannot show: the four moments of h's entries are invariant under any
permutation of the entries, while the head reads h linearly (w . h), so a state that keeps its
moments may still give the head another value; keeping the moments is neither necessary nor
sufficient for a good forecast, and a confirmed signature would not explain one.

Report: reports/moment_preserving_rank2/dynamics/, at the track's protocol (10,000 test windows;
the track is retired as a yardstick, README; benched at aa2f432, whose module differed from
this one only in this paragraph): harms / failed, 0.057 MSE worse than the baseline on 8 of 8
seeds (p 0.023, Holm over its comparisons), and `moments_kept_fraction` fails (0.38-0.49 of
the test states keep their moments over the 8 seeds, where at least 0.95 was predicted), which
its summary states in words.
"""
from __future__ import annotations

import numpy as np
import pytest
import torch
from hypothesis import assume, example, given, settings, strategies as st
from hypothesis.extra.numpy import arrays
from torch import nn

from benchkit.models import rnn_small

SIDE, RANK = 8, 2          # the 64-d hidden state as an 8x8 matrix, kept at rank 2
STORED = 2 * SIDE * RANK + 4  # numbers stored per state: rank-2 factors + cubic coefficients
NEWTON_STEPS, SOLVED_TOL = 12, 1e-6  # standardised moment residual counted as solved
SIGNATURE_WINDOWS = 1000  # test sequences the signatures read

pytestmark = pytest.mark.bench(
    name="moment_preserving_rank2", track="dynamics",
    claim_type="non-inferiority", margin=0.10,
    budget_waiver={
        "params": "the GRU control's 36-d state needs fewer weights; the claim compresses the "
                  "state, not the weights",
        "stored_numbers": "compression is the claim: the baseline stores 64 numbers per state "
                          "by design, the controls 32 (rank-2) and 36 (GRU)"},
    claim="a 36-number rank-2 + cubic encoding of the 64-d GRU state keeps four moments and "
          "predicts no worse than the plain GRU")


def rank2_factors(h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(..., 64) -> (U*S, V), each (..., 8, 2): the truncated-SVD rank-2 factors."""
    u, s, vh = torch.linalg.svd(h.reshape(*h.shape[:-1], SIDE, SIDE), full_matrices=False)
    return u[..., :RANK] * s[..., None, :RANK], vh[..., :RANK, :].transpose(-1, -2)


def rank2(h: torch.Tensor) -> torch.Tensor:
    """(..., 64) -> (..., 8, 8): the rank-2 approximation of each state."""
    us, v = rank2_factors(h)
    return us @ v.transpose(-1, -2)


def _standardised(entries: torch.Tensor):
    mean = entries.mean(-1, keepdim=True)
    sd = (entries - mean).pow(2).mean(-1, keepdim=True).sqrt()
    return (entries - mean) / sd.clamp_min(1e-12), sd


def solve_cubic(z: torch.Tensor, target: torch.Tensor):
    """Coefficients (b, c, d) of b z + c z^2 + d z^3 whose centred values have the central
    moments ``target`` (..., 3) = (m2, m3, m4), by batched Newton from (sd, 0, 0); and a mask of
    the states where it converged (elsewhere (sd, 0, 0) is returned). A state stops iterating
    once converged."""
    batch = z.shape[:-1]
    z, target = z.reshape(-1, z.shape[-1]), target.reshape(-1, 3)
    basis = torch.stack([z, z * z, z ** 3], -1)            # (states, 64, 3)
    w = basis - basis.mean(-2, keepdim=True)               # centred: the mean drops out
    start = torch.zeros_like(target)
    start[..., 0] = target[..., 0].sqrt()
    theta = start.clone()
    scale = target[..., :1].sqrt() ** torch.tensor([2.0, 3.0, 4.0], dtype=z.dtype, device=z.device)
    active = torch.arange(theta.shape[0], device=z.device)  # the states still iterating
    for _ in range(NEWTON_STEPS):
        f, jac = _moment_system(w[active], theta[active], target[active])
        going = (f.abs() / scale[active]).amax(-1) > SOLVED_TOL * 1e-3
        if not bool(going.any()):
            break  # every state converged (one that cannot converge keeps iterating)
        active, f, jac = active[going], f[going], jac[going]
        step, info = torch.linalg.solve_ex(jac, f)
        ok = (info == 0).unsqueeze(-1) & step.isfinite().all(-1, keepdim=True)
        theta[active] = torch.where(ok, theta[active] - step, theta[active])
    residual = (_moment_system(w, theta, target)[0].abs() / scale).amax(-1)
    solved = residual.isfinite() & (residual < SOLVED_TOL)
    return (torch.where(solved.unsqueeze(-1), theta, start).reshape(*batch, 3),
            solved.reshape(batch))


def _moment_system(w: torch.Tensor, theta: torch.Tensor, target: torch.Tensor):
    """(f, J): the central moments 2..4 of the centred values w @ theta minus ``target``, and
    their Jacobian in theta."""
    d = torch.einsum("snk,sk->sn", w, theta)  # one contraction: not a batch of tiny matmuls
    d2 = d * d
    d3 = d2 * d
    f = torch.stack([d2.mean(-1), d3.mean(-1), (d2 * d2).mean(-1)], -1) - target
    powers = torch.stack([2 * d, 3 * d2, 4 * d3], -2)  # (states, 3, 64)
    return f, torch.einsum("sjn,snk->sjk", powers, w) / w.shape[-2]


@torch.no_grad()
def encode(h: torch.Tensor):
    """(..., 64) -> (stored (..., 36), solved (...,)): the rank-2 factors and the cubic's
    coefficients (a, b, c, d) in the standardised entries of the rank-2 approximation. A state
    counts as solved only if its decoded numbers keep the moments: a cubic with huge
    coefficients (an outlier among small entries) solves the equations yet loses them to
    cancellation when evaluated, and gets the linear map instead."""
    h64 = torch.nan_to_num(h).double()
    us, v = rank2_factors(h64)
    z, _ = _standardised((us @ v.transpose(-1, -2)).flatten(-2))
    mh = moments(h64)
    theta, solved = solve_cubic(z, mh[..., 1:])
    stored = _pack(us, v, z, mh, theta)
    kept = solved & (state_residuals(h64, decode(stored)) < SOLVED_TOL)
    if bool((kept != solved).any()):
        linear = torch.zeros_like(theta)
        linear[..., 0] = mh[..., 1].sqrt()
        theta = torch.where(kept.unsqueeze(-1), theta, linear)
        stored = _pack(us, v, z, mh, theta)
    return stored.to(h.dtype), kept


def _pack(us, v, z, mh, theta) -> torch.Tensor:
    """The 36 stored numbers: the factors, then a (fixing the mean) and the cubic's b, c, d."""
    values = (torch.stack([z, z * z, z ** 3], -1) @ theta.unsqueeze(-1)).squeeze(-1)
    a = mh[..., :1] - values.mean(-1, keepdim=True)
    return torch.cat([us.flatten(-2), v.flatten(-2), a, theta], -1)


def decode(stored: torch.Tensor) -> torch.Tensor:
    """(..., 36) -> (..., 64): the state rebuilt from its stored numbers alone."""
    n = SIDE * RANK
    us = stored[..., :n].reshape(*stored.shape[:-1], SIDE, RANK)
    v = stored[..., n:2 * n].reshape(*stored.shape[:-1], SIDE, RANK)
    a, b, c, d = stored[..., 2 * n:].unbind(-1)
    z, _ = _standardised((us @ v.transpose(-1, -2)).flatten(-2))
    return a[..., None] + b[..., None] * z + c[..., None] * z * z + d[..., None] * z ** 3


def compress(h: torch.Tensor) -> torch.Tensor:
    """The stored state in the forward pass, the identity in the backward pass."""
    return h + (decode(encode(h)[0]) - h).detach()


def plain_rank2(h: torch.Tensor) -> torch.Tensor:
    """The control: the rank-2 factors alone (32 numbers), straight-through like compress."""
    with torch.no_grad():
        low = rank2(torch.nan_to_num(h)).flatten(-2)
    return h + (low - h).detach()


def moments(h: torch.Tensor) -> torch.Tensor:
    """(..., n) -> (..., 4): mean, variance, third and fourth central moments over the entries."""
    mean = h.mean(-1, keepdim=True)
    d = h - mean
    return torch.cat([mean] + [(d ** k).mean(-1, keepdim=True) for k in (2, 3, 4)], -1)


def state_residuals(h: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    """Per state, max over k of |m_k(c) - m_k(h)| / sd(h)^k: relative, scale-free residuals
    (the mean is measured in units of sd, so a zero-mean state is no special case)."""
    mh, mc = moments(h), moments(c)
    scale = mh[..., 1:2].sqrt() ** torch.arange(1, 5, dtype=h.dtype, device=h.device)
    return ((mc - mh).abs() / scale).amax(-1)


def moment_residual(h: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
    """The largest of :func:`state_residuals` over the states."""
    return state_residuals(h, c).max()


class CompressedGRU(nn.Module):
    """rnn_small's GRU stepped cell by cell (same parameters, gate order r, z, n as nn.GRU),
    with `squash` (default: compress) applied to the hidden state after every step."""

    def __init__(self, base: nn.Module, squash=compress):
        super().__init__()
        self.gru, self.head, self.squash = base.gru, base.head, squash

    @classmethod
    def for_track(cls, track) -> "CompressedGRU":
        """Wrap the track's default model: the same initial weights as the baseline's."""
        return cls(track.model())

    def forward(self, x: torch.Tensor, trace: list | None = None) -> torch.Tensor:
        g = self.gru
        gx = x @ g.weight_ih_l0.T + g.bias_ih_l0  # input gates of all steps at once: (B, T, 192)
        h = x.new_zeros(x.shape[0], g.hidden_size)
        for t in range(x.shape[1]):
            xr, xz, xn = gx[:, t].chunk(3, -1)
            hr, hz, hn = (h @ g.weight_hh_l0.T + g.bias_hh_l0).chunk(3, -1)
            r, z = torch.sigmoid(xr + hr), torch.sigmoid(xz + hz)
            raw = torch.lerp(torch.tanh(xn + r * hn), h, z)  # (1 - z) * n + z * h
            h = self.squash(raw)
            if trace is not None:
                trace.append((raw, h))
        return self.head(h)


@torch.no_grad()
def hidden_states(model: CompressedGRU, x: torch.Tensor):
    """Every step's state before compression, stacked: (B * T, 64)."""
    trace: list = []
    model(x, trace)
    return torch.cat([r for r, _ in trace])


@pytest.mark.arm("baseline")
def test_baseline(run):
    run.fit(run.track.model())
    run.budget("stored_numbers", SIDE * SIDE)


@pytest.mark.arm("control", name="plain_rank2")
def test_plain_rank2(run):
    run.fit(CompressedGRU(run.track.model(), squash=plain_rank2))
    run.budget("stored_numbers", 2 * SIDE * RANK)


@pytest.mark.arm("control", name="gru_equal_state")
def test_gru_with_an_equal_size_state(run):
    run.fit(rnn_small(hidden=STORED))
    run.budget("stored_numbers", STORED)


@pytest.mark.arm("idea")
def test_idea(run):
    model = run.fit(CompressedGRU.for_track(run.track))
    run.budget("stored_numbers", STORED)
    raw = hidden_states(model, run.data.test.x[:SIGNATURE_WINDOWS]).double()
    stored, solved = encode(raw)
    run.log("cubic_solved_fraction", solved.double().mean())
    decoded = decode(stored)
    low = rank2(raw).flatten(-2)
    run.log("relative_error", (raw - decoded).norm() / raw.norm())
    run.log("relative_error_plain_rank2", (raw - low).norm() / raw.norm())
    keep = solved & (moments(raw)[:, 1] > 1e-12)
    run.signature("moment_residual", observed=moment_residual(raw[keep], decoded[keep]),
                  predicted=0.0, tol=1e-3, null=moment_residual(raw[keep], low[keep]),
                  prediction="four moments of every test hidden state kept where the cubic "
                             "is solved")
    live = moments(raw)[:, 1] > 1e-12  # every non-degenerate state, solved or not
    run.signature("moments_kept_fraction",
                  observed=(state_residuals(raw[live], decoded[live]) <= 1e-3).double().mean(),
                  predicted=1.0, tol=0.05,
                  null=(state_residuals(raw[live], low[live]) <= 1e-3).double().mean(),
                  prediction="the stored state keeps four moments of at least 95% of the "
                             "trained model's test hidden states")


# -- mechanism: arbitrary bounded, non-degenerate 8x8 float64 matrices ------------------------
matrices = arrays(np.float64, (SIDE, SIDE), elements=st.floats(-1e3, 1e3))


def as_state(m: np.ndarray) -> torch.Tensor:
    assume(m.std() > max(1e-6, 1e-3 * np.abs(m).max()))  # variance not tiny, nor sd^4 = 0
    return torch.from_numpy(m).reshape(1, SIDE * SIDE)


def sparse_state(entries: dict[int, float]) -> np.ndarray:
    m = np.zeros((SIDE, SIDE))
    m.flat[list(entries)] = list(entries.values())
    return m


@pytest.mark.mechanism
@settings(max_examples=200, deadline=None)
@given(matrices)
@example(sparse_state({28: -1.0, 34: -999.0, 39: 2.0, 61: -999.0}))  # a cubic of 1e11 solves
def test_the_state_is_rebuilt_from_its_stored_numbers_keeping_four_moments(m):
    h = as_state(m)
    stored, solved = encode(h)
    assert stored.shape[-1] == STORED <= 38
    decoded = decode(stored)  # from the stored numbers alone
    if solved.all():
        assert moment_residual(h, decoded) < 1e-5
    else:  # the visible fallback: the linear map keeps mean and variance exactly
        mh, md = moments(h), moments(decoded)
        torch.testing.assert_close(md[..., :2], mh[..., :2], rtol=1e-6,
                                   atol=1e-9 * float(h.abs().max()) ** 2)


@pytest.mark.mechanism
@settings(max_examples=200, deadline=None)
@given(matrices)
def test_pre_correction_matrix_has_rank_at_most_2(m):
    assert np.linalg.matrix_rank(rank2(as_state(m))[0].numpy()) <= RANK


@pytest.mark.mechanism
def test_the_cubic_is_solved_on_most_gaussian_states_and_the_null_does_not_match():
    h = torch.from_numpy(np.random.default_rng(0).standard_normal((500, SIDE * SIDE)))
    stored, solved = encode(h)
    assert solved.double().mean() > 0.9
    decoded, low = decode(stored), rank2(h).flatten(-2)
    assert moment_residual(h[solved], decoded[solved]) < 1e-5
    assert moment_residual(h[solved], low[solved]) > 1e-2  # plain rank-2 loses the moments


@pytest.mark.mechanism
def test_cell_stepping_matches_nn_gru_and_gradients_flow():
    torch.manual_seed(0)
    base, x = rnn_small(), torch.randn(5, 7, 3)
    plain = CompressedGRU(base, squash=lambda h: h)  # no compression: must be nn.GRU exactly
    torch.testing.assert_close(plain(x), base(x), rtol=1e-5, atol=1e-6)
    h = torch.randn(4, SIDE * SIDE, requires_grad=True)
    compress(h).sum().backward()  # straight through: the identity's gradient
    torch.testing.assert_close(h.grad, torch.ones_like(h))
