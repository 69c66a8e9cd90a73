"""The Python face of the ops in src/torch/torch_ops.cpp."""
from __future__ import annotations

import dataclasses
import json
import os
import pathlib
from typing import Iterable, Optional, Sequence, Tuple

import torch

D_V = 512  # the value head width of both layouts
D_QK = {"v3": 576, "v4": 512}  # the cache row (and q) width of each layout


def _library_path() -> pathlib.Path:
    # MLALAB_TORCH_LIBRARY points at a library built outside pip (a CMake build folder), for
    # developing the binding without reinstalling.
    override = os.environ.get("MLALAB_TORCH_LIBRARY")
    return pathlib.Path(override) if override else pathlib.Path(__file__).with_name(
        "libmlalab_ops.so")


torch.ops.load_library(str(_library_path()))


@torch.library.register_fake("mlalab::mla_decode")
def _mla_decode_fake(q, kv_cache, block_table, seq_lens, softmax_scale, sinks, out, lse,
                     max_context, dispatcher):
    return None  # writes out and lse in place; nothing to infer


class Dispatcher:
    """Graph-safe dispatch for one problem (layout, heads, page size).

    prepare() resolves, before any CUDA-graph capture, the variant, split and grid of every
    (batch, max_context) key and allocates the workspace once, on the current CUDA device.
    A call during capture only looks up: an unprepared key raises RuntimeError naming it, and
    the capture stays usable. Keep the Dispatcher alive as long as graphs captured with it,
    and use it on one stream at a time: its calls share one workspace.

    layout     "v3" (576-wide rows) or "v4" (512)
    tuning     a tuning table written by `mlalab tune` (its entries win over the default);
               one from another GPU or build is refused with the field that differs
    split      the split policy of keys without a table entry: "heuristic" (default),
               "balanced" (for batches of mixed lengths), "fixed:N", "target_ctas:N"
    """

    def __init__(self, layout: str, heads: int, page_size: int,
                 tuning: Optional[os.PathLike | str] = None, split: str = "heuristic"):
        self.layout, self.heads, self.page_size = layout, heads, page_size
        self._handle = torch.ops.mlalab.dispatcher_new(
            layout, heads, page_size, None if tuning is None else os.fspath(tuning), split)

    def prepare(self, keys: Iterable[Tuple[int, int]]) -> int:
        """Resolves every (batch, max_context) key; returns the workspace size in bytes."""
        keys = list(keys)
        return torch.ops.mlalab.dispatcher_prepare(
            self._handle, [int(b) for b, _ in keys], [int(c) for _, c in keys])

    def resolution(self, batch: int, max_context: int) -> Optional[str]:
        """What a prepared key launches ("wgmma_h64_t64_w8_s2 split heuristic: 2 splits,
        256 CTAs (default: ...)"), or None when the key is not prepared."""
        text = torch.ops.mlalab.dispatcher_resolution(self._handle, batch, max_context)
        return text or None

    def __del__(self):
        handle = getattr(self, "_handle", None)
        if handle is not None and torch is not None and hasattr(torch.ops, "mlalab"):
            torch.ops.mlalab.dispatcher_free(handle)

    def __repr__(self):
        return (f"mlalab.Dispatcher({self.layout!r}, heads={self.heads}, "
                f"page_size={self.page_size})")


def mla_decode(q: torch.Tensor, kv_cache: torch.Tensor, block_table: torch.Tensor,
               seq_lens: torch.Tensor, softmax_scale: float, *,
               sinks: Optional[torch.Tensor] = None, out: Optional[torch.Tensor] = None,
               lse: Optional[torch.Tensor] = None, dispatcher: Optional[Dispatcher] = None,
               max_context: Optional[int] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    """MLA decode attention over a paged latent cache; returns (out, lse).

    q            [batch, heads, d_qk] bfloat16, d_qk 576 (V3) or 512 (V4)
    kv_cache     [pages, page_size, d_qk] or [pages, page_size, 1, d_qk] bfloat16: one row
                 per token, latent then rope; V is its first 512 columns
    block_table  [batch, max_pages] int32: the pages of each sequence in order
    seq_lens     [batch] int32: tokens of each sequence (0 allowed: out 0, lse -inf)
    sinks        [heads] float32 attention-sink logits (V4), or None
    out, lse     [batch, heads, 512] bfloat16 and [batch, heads] float32 (natural log),
                 allocated when None
    dispatcher   a prepared Dispatcher (needed inside CUDA-graph capture); None uses a default
                 one per device and problem, which prepares each key on first use
    max_context  the dispatch key's context; default block_table.shape[1] * page_size

    Writes nothing and raises ValueError naming the field and its allowed range when the
    input is wrong: shapes, dtypes and strides always; the contents of seq_lens and
    block_table on CPU tensors only (on CUDA, checking them would synchronise: every length
    must fit its block-table row and every page it uses must exist). No copies are made:
    strided q, out and caches are read in place. One CUDA device per process.
    """
    batch, heads = q.shape[0], q.shape[1]
    if out is None:
        out = torch.empty((batch, heads, D_V), dtype=torch.bfloat16, device=q.device)
    if lse is None:
        lse = torch.empty((batch, heads), dtype=torch.float32, device=q.device)
    torch.ops.mlalab.mla_decode(q, kv_cache, block_table, seq_lens, float(softmax_scale), sinks,
                                out, lse, max_context,
                                0 if dispatcher is None else dispatcher._handle)
    return out, lse


@dataclasses.dataclass(frozen=True)
class VariantConfig:
    """One compiled kernel variant as judged for this machine: a row of `mlalab configs`
    (the same fields as its --json)."""
    name: str
    family: str                        # "portable" (mma.sync) or "wgmma" (sm_90a)
    block_h: int                       # query heads per CTA
    block_t: int                       # KV tokens per pipeline step
    warps: int
    stages: int                        # pipeline depth
    whole_tiles: bool                  # swapped kernel: each KV tile taken whole, not in pieces
    smem_bytes: int                    # dynamic shared memory per CTA (the plan)
    static_smem_bytes: Optional[int]   # of the compiled kernel; None without a GPU
    regs: Optional[int]                # per thread; None without a GPU
    spill_bytes: Optional[int]
    max_ctas_per_sm: Optional[int]     # resident CTAs per SM, split build
    max_balanced_ctas_per_sm: Optional[int]  # and balanced build
    balanced_spill_bytes: Optional[int]      # the balanced build's (> 0: split launches only)
    feasible: bool                     # False: `reason` says which limit it exceeds
    reason: str                        # also what is missing when feasibility is unknown
    unchecked: Sequence[str]           # rules that need a GPU (or the compiled kernel)
    measured: bool                     # usage read from the compiled kernel on this GPU
    code_hash: str                     # of its machine code, the kernels' names left out
    code_hash_with_names: str          # the form recorded before 2026-12-06


def configs(smem_limit: Optional[int] = None, layout: str = "v3") -> list[VariantConfig]:
    """Every compiled variant with its resources and whether it can run here; smem_limit
    (bytes) models another GPU's shared-memory limit, e.g. 101376 for consumer Blackwell."""
    rows = json.loads(torch.ops.mlalab.configs(layout, smem_limit))
    return [VariantConfig(**{**row, "unchecked": tuple(row["unchecked"])}) for row in rows]
