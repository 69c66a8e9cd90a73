"""mlalab's own op as a Python arm of the A/B lab: `python = "mlalab.arms:mla_decode"`.

Beside a Triton kernel's Python arm it compares the two kernels through the same path (the
Python worker, the same copies and graphs), which a kernel arm of the same variant does not:
docs/results/2026-12-01-h200-triton-lab/ measured a Python arm of this op 0.6-2.3 % slower
than the kernel arm of the same variant and split.

params: `split` (the Dispatcher's policy: "heuristic", the default, "balanced", "fixed:N",
"target_ctas:N") and `tuning` (a table written by `mlalab tune`: unlike a kernel arm's `table`,
a path as the worker sees it, absolute or relative to where `mlalab ab` runs), as
mlalab.Dispatcher takes them.
"""
from __future__ import annotations

import hashlib
import pathlib

import mlalab

_last_dispatcher: tuple = (None, None)  # (key, Dispatcher)


def __mlalab_code_identity__(params: dict) -> str:
    """What the arm's code hash must cover beyond this file's source (mlalab.worker): the
    machine code of mlalab's kernels in this build (their SASS hashes) and the tuning table's
    contents, so that `mlalab verify` sees a rebuilt library or a re-tuned table."""
    kernels = ",".join(f"{config.name}:{config.code_hash}" for config in mlalab.configs())
    tuning = params.get("tuning")
    table = hashlib.sha256(pathlib.Path(tuning).read_bytes()).hexdigest() if tuning else ""
    return f"kernels {kernels}; table {table}"


def _dispatcher(problem, split: str, tuning) -> mlalab.Dispatcher:
    """One Dispatcher for the launchers the worker makes in a row for one arm (one per copy of
    the point's inputs: one workspace, as in an engine's layers and in the lab's kernel arms),
    prepared before the worker captures them. Launchers keep their own Dispatcher alive."""
    global _last_dispatcher
    batch, heads, _ = problem.q.shape
    key = (problem.layout, heads, problem.page_size, batch, problem.max_context, split, tuning)
    if _last_dispatcher[0] != key:
        dispatcher = mlalab.Dispatcher(problem.layout, heads=heads, page_size=problem.page_size,
                                       tuning=tuning, split=split)
        dispatcher.prepare([(batch, problem.max_context)])
        _last_dispatcher = (key, dispatcher)
    return _last_dispatcher[1]


def mla_decode(problem, params: dict, softmax_scale: float | None = None):
    """The A/B-lab arm: mlalab.mla_decode on the point's problem; on CUDA through a prepared
    Dispatcher (nothing is allocated inside the worker's capture), whose resolution the
    launcher reports (the lab lists it per point)."""
    params = dict(params)
    split = params.pop("split", "heuristic")
    tuning = params.pop("tuning", None)
    if params:
        raise ValueError(f"params {sorted(params)}: mlalab.arms:mla_decode takes split and "
                         "tuning only")
    dispatcher = _dispatcher(problem, split, tuning) if problem.q.is_cuda else None
    scale = problem.softmax_scale if softmax_scale is None else softmax_scale

    def launcher():
        mlalab.mla_decode(problem.q, problem.kv_cache, problem.block_table, problem.seq_lens,
                          scale, sinks=problem.sinks, out=problem.out, lse=problem.lse,
                          dispatcher=dispatcher,
                          max_context=problem.max_context if dispatcher else None)

    if dispatcher is not None:
        launcher.resolved_config = dispatcher.resolution(problem.q.shape[0], problem.max_context)
    return launcher
