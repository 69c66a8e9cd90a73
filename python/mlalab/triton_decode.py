"""A Triton MLA decode kernel of the kind the study that started mlalab tested (issue 11, part 3).

Two stages, as in serving engines' Triton kernels:
  1. split attention: program (sequence b, head block, split s) computes BLOCK_H heads over
     split s of sequence b's KV tokens, BLOCK_N tokens per iteration, gathered through the
     page table: S = q·Kᵀ over the row's d_qk columns (V3: the 512 latent ones and the 64 rope
     ones as two dots; V4: all 512 in one), an online softmax in base 2, O += P·V with V the
     row's first 512 columns (the same tile), then the split's partial O (fp32, normalised
     by its own sum) and lse;
  2. merge: program (b, head) weighs the splits' partials by their lse and adds the sink, if
     any, to the denominator only.
The split count follows a TARGET_CTAS rule, the study's: the fewest splits with
batch × head_blocks × splits ≥ TARGET_CTAS, at most one split per BLOCK_N tokens of the
longest sequence. Its knobs are the study's: BLOCK_H, BLOCK_N, num_warps, num_stages,
TARGET_CTAS (TritonConfig).

    out, lse = mla_decode_triton(q, kv_cache, block_table, seq_lens, softmax_scale,
                                 config=TritonConfig(block_n=16, block_h=16))

The data layout is mlalab.mla_decode's: q [batch, heads, d_qk] bf16, kv_cache
[pages, page_size, d_qk] bf16 (rows contiguous), block_table [batch, max_pages] int32,
seq_lens [batch] int32, sinks [heads] fp32 or None; out [batch, heads, 512] bf16, lse
[batch, heads] fp32 (natural log, over the scores alone).
"""
from __future__ import annotations

import dataclasses
import math
from typing import Optional

import torch
import triton
import triton.language as tl

from mlalab._ops import D_QK, D_V

LN2 = math.log(2.0)
LOG2E = 1.0 / LN2
MERGE_CHUNK = 16  # splits the merge reads at a time


@dataclasses.dataclass(frozen=True)
class TritonConfig:
    """The study's knobs; the default is its production config."""

    block_n: int = 16  # KV tokens per iteration
    block_h: int = 16  # heads per program
    num_warps: int = 4
    num_stages: int = 2
    target_ctas: int = 512

    def __post_init__(self):
        for name, low in (("block_n", 16), ("block_h", 16)):
            value = getattr(self, name)
            if value < low or value & (value - 1):
                raise ValueError(f"{name} = {value}: must be a power of two, at least {low} "
                                 "(tl.dot's smallest tile)")
        if self.num_warps not in (1, 2, 4, 8, 16):
            raise ValueError(f"num_warps = {self.num_warps}: must be one of 1, 2, 4, 8, 16")
        if self.num_stages < 1:
            raise ValueError(f"num_stages = {self.num_stages}: must be at least 1")
        if self.target_ctas < 1:
            raise ValueError(f"target_ctas = {self.target_ctas}: must be at least 1")

    @property
    def name(self) -> str:
        return (f"triton_h{self.block_h}_n{self.block_n}_w{self.num_warps}_s{self.num_stages}"
                f"_ctas{self.target_ctas}")


def num_splits(config: TritonConfig, batch: int, heads: int, max_context: int) -> int:
    """The TARGET_CTAS rule: the fewest splits with batch × head_blocks × splits ≥ target_ctas,
    capped so that every split of the longest sequence has a BLOCK_N step of tokens."""
    head_blocks = triton.cdiv(heads, config.block_h)
    wanted = triton.cdiv(config.target_ctas, max(1, batch * head_blocks))
    return max(1, min(wanted, triton.cdiv(max(1, max_context), config.block_n)))


@triton.jit
def _split_attention(q_ptr, kv_ptr, block_table_ptr, seq_lens_ptr, partial_out_ptr,
                     partial_lse_ptr, scale_log2, num_heads, num_splits, q_batch_stride,
                     q_head_stride, kv_page_stride, kv_row_stride, block_table_stride,
                     PAGE_SIZE: tl.constexpr, D_TAIL: tl.constexpr, BLOCK_H: tl.constexpr,
                     BLOCK_N: tl.constexpr, NUM_STAGES: tl.constexpr):
    batch = tl.program_id(0)
    head_block = tl.program_id(1)
    split = tl.program_id(2)
    heads = head_block * BLOCK_H + tl.arange(0, BLOCK_H)
    head_valid = heads < num_heads
    # Splits are whole BLOCK_N steps, so only a sequence's last step is partly masked.
    seq_len = tl.load(seq_lens_ptr + batch)
    split_tokens = tl.cdiv(tl.cdiv(seq_len, BLOCK_N), num_splits) * BLOCK_N
    begin = split * split_tokens
    end = tl.minimum(begin + split_tokens, seq_len)

    latent = tl.arange(0, 512)
    q_rows = q_ptr + batch.to(tl.int64) * q_batch_stride + heads[:, None] * q_head_stride
    q_main = tl.load(q_rows + latent[None, :], mask=head_valid[:, None], other=0.0)
    if D_TAIL > 0:
        tail = 512 + tl.arange(0, D_TAIL)
        q_tail = tl.load(q_rows + tail[None, :], mask=head_valid[:, None], other=0.0)

    running_max = tl.full([BLOCK_H], float("-inf"), tl.float32)
    running_sum = tl.zeros([BLOCK_H], tl.float32)
    acc = tl.zeros([BLOCK_H, 512], tl.float32)
    for start in tl.range(begin, end, BLOCK_N, num_stages=NUM_STAGES):
        tokens = start + tl.arange(0, BLOCK_N)
        valid = tokens < end
        # Entries past the sequence's pages may be garbage: never followed.
        pages = tl.load(block_table_ptr + batch * block_table_stride + tokens // PAGE_SIZE,
                        mask=valid, other=0)
        rows = kv_ptr + pages.to(tl.int64) * kv_page_stride + (tokens % PAGE_SIZE) * kv_row_stride
        kv_main = tl.load(rows[:, None] + latent[None, :], mask=valid[:, None], other=0.0)
        scores = tl.dot(q_main, tl.trans(kv_main))
        if D_TAIL > 0:
            kv_tail = tl.load(rows[:, None] + tail[None, :], mask=valid[:, None], other=0.0)
            scores += tl.dot(q_tail, tl.trans(kv_tail))
        scores = tl.where(valid[None, :], scores * scale_log2, float("-inf"))
        # Every step has a valid token, so the new maximum is finite.
        new_max = tl.maximum(running_max, tl.max(scores, axis=1))
        rescale = tl.exp2(running_max - new_max)
        probs = tl.exp2(scores - new_max[:, None])
        running_sum = running_sum * rescale + tl.sum(probs, axis=1)
        acc = acc * rescale[:, None] + tl.dot(probs.to(kv_main.dtype), kv_main)
        running_max = new_max

    # A split past the sequence's end has no tokens: lse −inf, which the merge weighs 0.
    has_tokens = running_sum > 0.0
    out = acc / tl.where(has_tokens, running_sum, 1.0)[:, None]
    lse = tl.where(has_tokens, (running_max + tl.log2(running_sum)) * 0.6931471805599453,
                   float("-inf"))
    split_rows = (batch.to(tl.int64) * num_heads + heads) * num_splits + split
    tl.store(partial_out_ptr + split_rows[:, None] * 512 + latent[None, :], out,
             mask=head_valid[:, None])
    tl.store(partial_lse_ptr + split_rows, lse, mask=head_valid)


@triton.jit
def _merge_splits(partial_out_ptr, partial_lse_ptr, sinks_ptr, out_ptr, lse_ptr, num_heads,
                  num_splits, out_batch_stride, out_head_stride, HAS_SINKS: tl.constexpr,
                  CHUNK: tl.constexpr):
    batch = tl.program_id(0)
    head = tl.program_id(1)
    row = batch.to(tl.int64) * num_heads + head
    first_split = row * num_splits
    chunk = tl.arange(0, CHUNK)
    top = float("-inf")
    for base in range(0, num_splits, CHUNK):
        lses = tl.load(partial_lse_ptr + first_split + base + chunk,
                       mask=base + chunk < num_splits, other=float("-inf"))
        top = tl.maximum(top, tl.max(lses, axis=0))
    empty = top == float("-inf")  # no split had tokens: out 0, lse −inf
    shift = tl.where(empty, 0.0, top)

    latent = tl.arange(0, 512)
    total = tl.zeros([512], tl.float32)
    weight_sum = 0.0
    for base in range(0, num_splits, CHUNK):
        in_range = base + chunk < num_splits
        lses = tl.load(partial_lse_ptr + first_split + base + chunk, mask=in_range,
                       other=float("-inf"))
        weights = tl.exp(lses - shift)  # 0 for splits without tokens
        # Splits without tokens wrote 0 / 1 = 0, but are kept out of the loads all the same.
        parts = tl.load(partial_out_ptr + (first_split + base + chunk)[:, None] * 512 +
                        latent[None, :], mask=(in_range & (weights > 0.0))[:, None], other=0.0)
        total += tl.sum(weights[:, None] * parts, axis=0)
        weight_sum += tl.sum(weights, axis=0)
    denominator = weight_sum
    if HAS_SINKS:
        denominator += tl.exp(tl.load(sinks_ptr + head) - shift)
    out = tl.where(empty, 0.0, total / tl.where(empty, 1.0, denominator))
    tl.store(out_ptr + batch.to(tl.int64) * out_batch_stride + head * out_head_stride + latent,
             out.to(out_ptr.dtype.element_ty))
    tl.store(lse_ptr + row, tl.where(empty, float("-inf"), shift + tl.log(weight_sum)))


def _layout_tail(d_qk: int) -> int:
    if d_qk not in D_QK.values():
        raise ValueError(f"q and kv_cache rows are {d_qk} wide: the layouts are v3 (576) and "
                         "v4 (512)")
    return d_qk - D_V


def mla_decode_triton(q: torch.Tensor, kv_cache: torch.Tensor, block_table: torch.Tensor,
                      seq_lens: torch.Tensor, softmax_scale: float,
                      sinks: Optional[torch.Tensor] = None, out: Optional[torch.Tensor] = None,
                      lse: Optional[torch.Tensor] = None, config: TritonConfig = TritonConfig(),
                      max_context: Optional[int] = None,
                      workspace: Optional[torch.Tensor] = None):
    """Runs both stages on the current stream; returns (out, lse). max_context (the longest
    sequence the launch must cover) sizes the split count; without it, it is read from
    seq_lens (a device sync: pass it inside CUDA-graph capture, with out, lse and a workspace
    of workspace_floats(...) floats, so that nothing is allocated)."""
    batch, heads, d_qk = q.shape
    d_tail = _layout_tail(d_qk)
    if kv_cache.shape[-1] != d_qk or kv_cache.stride(-1) != 1 or q.stride(-1) != 1:
        raise ValueError(f"kv_cache rows must be q's width ({d_qk}), both contiguous in it")
    if max_context is None:
        max_context = int(seq_lens.max()) if batch else 0
    splits = num_splits(config, batch, heads, max_context)
    if out is None:
        out = torch.empty(batch, heads, D_V, dtype=q.dtype, device=q.device)
    if lse is None:
        lse = torch.empty(batch, heads, dtype=torch.float32, device=q.device)
    floats = workspace_floats(config, batch, heads, max_context)
    if workspace is None:
        workspace = torch.empty(floats, dtype=torch.float32, device=q.device)
    elif workspace.numel() < floats or workspace.dtype != torch.float32:
        raise ValueError(f"workspace: needs {floats} float32 elements, has {workspace.numel()} "
                         f"{workspace.dtype}")
    rows = batch * heads * splits
    partial_out, partial_lse = workspace[:rows * D_V], workspace[rows * D_V:rows * (D_V + 1)]
    _split_attention[(batch, triton.cdiv(heads, config.block_h), splits)](
        q, kv_cache, block_table, seq_lens, partial_out, partial_lse,
        softmax_scale * LOG2E, heads, splits, q.stride(0), q.stride(1), kv_cache.stride(0),
        kv_cache.stride(1), block_table.stride(0), PAGE_SIZE=kv_cache.shape[1], D_TAIL=d_tail,
        BLOCK_H=config.block_h, BLOCK_N=config.block_n, NUM_STAGES=config.num_stages,
        num_warps=config.num_warps, num_stages=config.num_stages)
    _merge_splits[(batch, heads)](
        partial_out, partial_lse, sinks if sinks is not None else partial_lse, out, lse, heads,
        splits, out.stride(0), out.stride(1), HAS_SINKS=sinks is not None, CHUNK=MERGE_CHUNK)
    return out, lse


def arm(problem, params: dict):
    """An A/B-lab Python arm (mlalab.worker; `python = "mlalab.triton_decode:arm"`): this
    kernel with TritonConfig(**params) on the sweep point's problem, its workspace allocated
    here (outside the timed launches) and shared by every launcher made here. params may add `smem_limit` (bytes, e.g. 101376 for
    consumer Blackwell): a config whose compiled kernel needs more shared memory is refused
    with judge()'s reason, so the lab reports the arm INVALID, as the study pruned it."""
    params = dict(params)
    smem_limit = params.pop("smem_limit", None)
    config = TritonConfig(**params)
    if smem_limit is not None:
        verdict = judge(config, problem.layout, problem.page_size, smem_limit=int(smem_limit))
        if not verdict.feasible:
            raise ValueError(f"pruned: {verdict.reason}")
    batch, heads, _ = problem.q.shape
    workspace = _shared_workspace(workspace_floats(config, batch, heads, problem.max_context),
                                  problem.q.device)

    def launcher():
        mla_decode_triton(problem.q, problem.kv_cache, problem.block_table, problem.seq_lens,
                          problem.softmax_scale, problem.sinks, out=problem.out,
                          lse=problem.lse, config=config, max_context=problem.max_context,
                          workspace=workspace)

    splits = num_splits(config, batch, heads, problem.max_context)
    programs = batch * triton.cdiv(heads, config.block_h) * splits
    launcher.resolved_config = (f"{config.name}: {splits} split{'s' if splits > 1 else ''}, "
                                f"{programs} programs")
    return launcher


_workspace: Optional[torch.Tensor] = None


def _shared_workspace(floats: int, device: torch.device) -> torch.Tensor:
    """One workspace for every launcher arm() makes (the lab's copies of a point's inputs),
    as a serving engine keeps one for all its layers: a workspace per copy would send each
    call's partial results to HBM, where a shared one keeps them in L2 (2-4 % at C1-C128)."""
    global _workspace
    if _workspace is None or _workspace.numel() < floats or _workspace.device != device:
        _workspace = torch.empty(floats, dtype=torch.float32, device=device)
    return _workspace


def workspace_floats(config: TritonConfig, batch: int, heads: int, max_context: int) -> int:
    """float32 elements of the partial results: every (sequence, head, split) row's 512
    values and lse."""
    return batch * heads * num_splits(config, batch, heads, max_context) * (D_V + 1)


@dataclasses.dataclass(frozen=True)
class Feasibility:
    config: TritonConfig
    smem_bytes: int
    feasible: bool
    reason: str  # why not, e.g. "needs 106,496 B of shared memory, limit 101,376 B"


def judge(config: TritonConfig, layout: str, page_size: int = 64,
          smem_limit: Optional[int] = None) -> Feasibility:
    """Compiles the split-attention kernel of `config` for the current CUDA device (no
    launch) and prunes it when it needs more shared memory than smem_limit (default: the
    device's opt-in limit per block). 101376 emulates consumer Blackwell, where the study
    pruned BLOCK_N 32."""
    if layout not in D_QK:
        raise ValueError(f"layout {layout!r}: one of {', '.join(D_QK)}")
    device = torch.device("cuda")
    if smem_limit is None:
        smem_limit = torch.cuda.get_device_properties(device).shared_memory_per_block_optin
    d_qk = D_QK[layout]
    q = torch.empty(1, config.block_h, d_qk, dtype=torch.bfloat16, device=device)
    kv = torch.empty(1, page_size, d_qk, dtype=torch.bfloat16, device=device)
    table = torch.empty(1, 1, dtype=torch.int32, device=device)
    lens = torch.empty(1, dtype=torch.int32, device=device)
    partial = torch.empty(1, dtype=torch.float32, device=device)
    kernel = _split_attention.warmup(
        q, kv, table, lens, partial, partial, 1.0, config.block_h, 1, q.stride(0), q.stride(1),
        kv.stride(0), kv.stride(1), table.stride(0), PAGE_SIZE=page_size, D_TAIL=d_qk - D_V,
        BLOCK_H=config.block_h, BLOCK_N=config.block_n, NUM_STAGES=config.num_stages,
        num_warps=config.num_warps, num_stages=config.num_stages, grid=(1,))
    smem = int(kernel.metadata.shared)
    if smem > smem_limit:
        return Feasibility(config, smem, False,
                           f"needs {smem:,} B of shared memory, limit {smem_limit:,} B")
    return Feasibility(config, smem, True, "")
