"""Problems for checking a decode kernel: random paged caches, and an independent float64
reference written from the op's definition (README: score = scale · q·row, V = the row's first
512 columns, the sink only in the denominator, lse over the scores alone), for the package's
tests; Problem is also what the A/B lab's Python worker (mlalab.worker) hands a Python arm."""
from __future__ import annotations

import dataclasses
import math
from typing import Optional, Sequence

import torch

from mlalab._ops import D_QK, D_V


@dataclasses.dataclass
class Problem:
    q: torch.Tensor
    kv_cache: torch.Tensor
    block_table: torch.Tensor
    seq_lens: torch.Tensor
    softmax_scale: float
    sinks: Optional[torch.Tensor]

    @property
    def page_size(self) -> int:
        return self.kv_cache.shape[1]

    def first(self, count: int) -> "Problem":
        """The problem of the first `count` sequences (the same cache)."""
        return dataclasses.replace(self, q=self.q[:count], block_table=self.block_table[:count],
                                   seq_lens=self.seq_lens[:count])

    def to(self, device) -> "Problem":
        return dataclasses.replace(self, **{
            f.name: getattr(self, f.name).to(device) for f in dataclasses.fields(self)
            if isinstance(getattr(self, f.name), torch.Tensor)})


def make_problem(layout: str, lengths: Sequence[int], heads: int, page_size: int,
                 seed: int, sinks: bool = False, max_pages: Optional[int] = None) -> Problem:
    """Pages are scattered (a random permutation) and some spare; values are never zero. Each
    sequence's last token, and its token 64 (a tile and page boundary), hold a row that one
    head scores far above the rest, so that a kernel that drops or repeats a token at an edge
    is off by far more than rounding."""
    generator = torch.Generator().manual_seed(seed)
    d_qk = D_QK[layout]
    pages_per_seq = [max(1, math.ceil(n / page_size)) for n in lengths]
    width = max_pages or max(pages_per_seq)
    num_pages = sum(pages_per_seq) + 3
    order = torch.randperm(num_pages, generator=generator).to(torch.int32)
    # Entries past a sequence's pages are garbage the kernels must never read.
    block_table = torch.full((len(lengths), width), -7, dtype=torch.int32)
    used = 0
    for b, pages in enumerate(pages_per_seq):
        block_table[b, :pages] = order[used:used + pages]
        used += pages

    def nonzero(*shape):
        values = torch.randn(*shape, generator=generator)
        return (values + 0.05 * torch.sign(values)).to(torch.bfloat16)

    q = nonzero(len(lengths), heads, d_qk)
    kv_cache = nonzero(num_pages, page_size, d_qk)
    rows = kv_cache.view(-1, d_qk)
    for b, length in enumerate(lengths):
        for position, head in ((length - 1, 0), (min(64, length - 1), 1 % heads)):
            if position < 0:
                continue
            page = int(block_table[b, position // page_size])
            # score = scale · 0.5 · |q|² ≈ 12: dominant for that head.
            rows[page * page_size + position % page_size] = (q[b, head].float() * 0.5).to(
                torch.bfloat16)
    return Problem(
        q=q,
        kv_cache=kv_cache,
        block_table=block_table,
        seq_lens=torch.tensor(lengths, dtype=torch.int32),
        softmax_scale=1.0 / math.sqrt(d_qk),
        sinks=(torch.randn(heads, generator=generator) * 2).float() if sinks else None,
    )


def reference(problem: Problem) -> tuple[torch.Tensor, torch.Tensor]:
    """(out, lse) in float64 on the CPU."""
    p = problem.to("cpu")
    batch, heads, d_qk = p.q.shape
    out = torch.zeros(batch, heads, D_V, dtype=torch.float64)
    lse = torch.full((batch, heads), -math.inf, dtype=torch.float64)
    for b in range(batch):
        length = int(p.seq_lens[b])
        if length == 0:
            continue
        pages = p.block_table[b, :math.ceil(length / p.page_size)].long()
        rows = p.kv_cache[pages].reshape(-1, d_qk)[:length].double()
        scores = p.softmax_scale * (p.q[b].double() @ rows.T)  # [heads, length]
        top = scores.max(dim=1, keepdim=True).values
        weights = torch.exp(scores - top)
        denominator = weights.sum(dim=1)
        lse[b] = top[:, 0] + torch.log(denominator)
        if p.sinks is not None:
            denominator = denominator + torch.exp(p.sinks.double() - top[:, 0])
        out[b] = (weights @ rows[:, :D_V]) / denominator[:, None]
    return out, lse


def assert_matches(out: torch.Tensor, lse: torch.Tensor, problem: Problem,
                   sequences: Optional[int] = None) -> None:
    """bf16 output: within 1 % of the row's largest value (bf16 rounds at 0.4 %; the kernels
    measured up to 0.55 %); lse within 1e-4 (they measured 1e-6); empty sequences exactly 0
    and -inf; nothing NaN. `sequences`: check only the first ones (the reference of a large
    batch takes long)."""
    if sequences is not None and sequences < problem.q.shape[0]:
        problem, out, lse = problem.first(sequences), out[:sequences], lse[:sequences]
    want_out, want_lse = reference(problem)
    out, lse = out.double().cpu(), lse.double().cpu()
    assert not torch.isnan(out).any(), "out has NaN"
    assert not torch.isnan(lse).any(), "lse has NaN"
    scale = want_out.abs().amax(dim=-1, keepdim=True).clamp_min(1e-3)
    error = ((out - want_out).abs() / scale).max().item()
    assert error < 1e-2, f"out differs from the reference by {error:.3g} of the row's scale"
    empty = torch.isinf(want_lse)
    assert torch.equal(lse == -math.inf, empty), "lse is -inf exactly for empty sequences"
    if (~empty).any():
        lse_error = (lse[~empty] - want_lse[~empty]).abs().max().item()
        assert lse_error < 1e-4, f"lse differs from the reference by {lse_error:.3g}"
    assert (out[empty.unsqueeze(-1).expand_as(out)] == 0).all(), "empty sequences give 0"


def poisoned_outputs(problem: Problem) -> tuple[torch.Tensor, torch.Tensor]:
    batch, heads = problem.q.shape[:2]
    device = problem.q.device
    out = torch.full((batch, heads, D_V), math.nan, dtype=torch.bfloat16, device=device)
    lse = torch.full((batch, heads), math.nan, dtype=torch.float32, device=device)
    return out, lse
