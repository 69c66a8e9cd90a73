#!/usr/bin/env python3
"""mlalab beside the MLA decode kernels a user can install from PyPI, on identical inputs.

    python3 bench/peers/peer_table.py [--heads 16,128] [--batch 1,8,32,64,128]
                                      [--context 1024,4096,16384] [--tuning TABLE]
                                      [--json FILE] [--markdown FILE]

For every shape (V3 layout, page 64, bf16, every sequence `context` tokens, pages scattered)
each implementation gets the same q and cache, is checked against a float32 reference on up to
four sequences (all heads), and is timed the same way: a CUDA graph of one call per copy of the
KV cache, with enough copies (their pages in the same places) that together they are twice the
L2 cache, so that no call finds its KV in L2; the median over 30 replays, divided by the calls
per replay. Printed per shape: µs, KV GB/s, TFLOP/s and each peer's time over mlalab's (> 1:
mlalab faster), then each peer's geometric mean of that ratio.

Implementations: mlalab (the installed package; its tuned dispatch with --tuning, else its
default dispatch) and FlashInfer's BatchMLAPagedAttentionWrapper (package flashinfer-python,
its native layout: the 512-wide latent and the 64-wide rope part as two caches). A peer that
cannot be imported, planned or run is listed with the reason, and its column stays empty.
"""
from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import statistics
import subprocess
import sys
from typing import Callable, Optional

import torch

import mlalab

D_QK, D_LATENT, D_V = 576, 512, 512
PAGE_SIZE = 64
REPLAYS = 30
MAX_COPY_BYTES = 40 << 30  # all KV copies of one shape together


class Shape:
    def __init__(self, heads: int, batch: int, context: int, seed: int):
        self.heads, self.batch, self.context = heads, batch, context
        generator = torch.Generator(device="cuda").manual_seed(seed)
        pages_per_seq = math.ceil(context / PAGE_SIZE)
        num_pages = batch * pages_per_seq
        self.block_table = torch.randperm(num_pages, generator=generator, device="cuda").to(
            torch.int32).reshape(batch, pages_per_seq)
        self.seq_lens = torch.full((batch,), context, dtype=torch.int32, device="cuda")
        self.q = torch.randn(batch, heads, D_QK, generator=generator, device="cuda").to(
            torch.bfloat16)
        self.cache = torch.randn(num_pages, PAGE_SIZE, D_QK, generator=generator,
                                 device="cuda").to(torch.bfloat16)
        self.scale = 1.0 / math.sqrt(D_QK)
        # Copies of the cache that together are twice the L2 cache, so that every timed call
        # reads its KV from memory.
        l2_bytes = torch.cuda.get_device_properties(0).L2_cache_size
        cache_bytes = self.cache.numel() * 2
        wanted = max(1, math.ceil(2 * l2_bytes / cache_bytes))
        self.copies = max(1, min(wanted, MAX_COPY_BYTES // cache_bytes))

    def kv_bytes(self) -> int:
        return self.batch * self.context * D_QK * 2

    def flops(self) -> int:
        return 2 * self.batch * self.heads * self.context * (D_QK + D_V)

    def reference(self, sequences: list[int]) -> torch.Tensor:
        """out of the given sequences, float32 on the GPU."""
        rows = []
        for b in sequences:
            kv = self.cache[self.block_table[b].long()].reshape(-1, D_QK)[:self.context].float()
            scores = self.scale * (self.q[b].float() @ kv.T)
            rows.append(torch.softmax(scores, dim=-1) @ kv[:, :D_V])
        return torch.stack(rows)


# An implementation, set up for one shape: `launch(copy)` runs one call on KV copy `copy`
# (0 ≤ copy < shape.copies) and returns the output tensor (written in place, the same each
# call); it may only launch work, so that it can be captured.
Launcher = Callable[[int], torch.Tensor]


def mlalab_launcher(shape: Shape, caches: list[torch.Tensor], tuning: Optional[str]) -> Launcher:
    dispatcher = mlalab.Dispatcher("v3", shape.heads, PAGE_SIZE, tuning=tuning)
    dispatcher.prepare([(shape.batch, shape.context)])
    out = torch.empty(shape.batch, shape.heads, D_V, dtype=torch.bfloat16, device="cuda")
    lse = torch.empty(shape.batch, shape.heads, dtype=torch.float32, device="cuda")

    def launch(copy: int) -> torch.Tensor:
        mlalab.mla_decode(shape.q, caches[copy], shape.block_table, shape.seq_lens,
                          shape.scale, out=out, lse=lse, dispatcher=dispatcher,
                          max_context=shape.context)
        return out

    launch.description = dispatcher.resolution(shape.batch, shape.context)
    launch.keep_alive = dispatcher
    return launch


def flashinfer_launcher(shape: Shape, caches: list[torch.Tensor]) -> Launcher:
    import flashinfer  # noqa: F401  (the reason it is missing is the peer's row)
    from flashinfer.mla import BatchMLAPagedAttentionWrapper

    batch = shape.batch
    pages_per_seq = shape.block_table.shape[1]
    qo_indptr = torch.arange(batch + 1, dtype=torch.int32, device="cuda")
    kv_indptr = qo_indptr * pages_per_seq
    kv_indices = shape.block_table.reshape(-1).contiguous()
    kv_lens = shape.seq_lens.clone()
    workspace = torch.empty(128 << 20, dtype=torch.int8, device="cuda")
    wrapper = BatchMLAPagedAttentionWrapper(
        workspace, use_cuda_graph=True, qo_indptr=torch.empty_like(qo_indptr),
        kv_indptr=torch.empty_like(kv_indptr), kv_indices=torch.empty_like(kv_indices),
        kv_len_arr=torch.empty_like(kv_lens))
    wrapper.plan(qo_indptr, kv_indptr, kv_indices, kv_lens, shape.heads, D_LATENT,
                 D_QK - D_LATENT, PAGE_SIZE, False, shape.scale, torch.bfloat16,
                 torch.bfloat16)
    q_nope = shape.q[..., :D_LATENT].contiguous()
    q_pe = shape.q[..., D_LATENT:].contiguous()
    # FlashInfer's own layout: the latent and the rope part as two caches.
    split_caches = [(c[..., :D_LATENT].contiguous(), c[..., D_LATENT:].contiguous())
                    for c in caches]
    out = torch.empty(batch, shape.heads, D_V, dtype=torch.bfloat16, device="cuda")

    def launch(copy: int) -> torch.Tensor:
        ckv, kpe = split_caches[copy]
        wrapper.run(q_nope, q_pe, ckv, kpe, out=out)
        return out

    launch.description = f"flashinfer {flashinfer.__version__}, backend {wrapper._backend}"
    launch.keep_alive = (wrapper, workspace, split_caches)
    return launch


def check(shape: Shape, launch: Launcher) -> float:
    """The largest error of out over the checked sequences, relative to each row's largest
    value; raises when it is NaN or over 2 %."""
    out = launch(0).float()
    torch.cuda.synchronize()
    sequences = sorted({0, shape.batch // 3, 2 * shape.batch // 3, shape.batch - 1})
    want = shape.reference(sequences)
    got = out[sequences]
    if torch.isnan(got).any():
        raise RuntimeError("output has NaN")
    scale = want.abs().amax(dim=-1, keepdim=True).clamp_min(1e-3)
    error = ((got - want).abs() / scale).max().item()
    if error > 2e-2:
        raise RuntimeError(f"disagrees with the reference: {error:.3g} of the row's scale")
    return error


def time_us(shape: Shape, launch: Launcher) -> float:
    """Median µs per call: a graph of one call per KV copy, replayed REPLAYS times."""
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):  # warm-up outside capture (lazy initialisation)
        for copy in range(shape.copies):
            launch(copy)
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for copy in range(shape.copies):
            launch(copy)
    for _ in range(3):
        graph.replay()
    samples = []
    for _ in range(REPLAYS):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        samples.append(start.elapsed_time(end) * 1000.0 / shape.copies)
    return statistics.median(samples)


def measure(shape: Shape, name: str, make: Callable[[list[torch.Tensor]], Launcher],
            caches: list[torch.Tensor]) -> dict:
    try:
        launch = make(caches)
        error = check(shape, launch)
        us = time_us(shape, launch)
    except Exception as exception:  # a peer that cannot run here is a row, not a crash
        return {"name": name, "error": f"{type(exception).__name__}: {exception}"}
    return {"name": name, "us": us, "gb_per_s": shape.kv_bytes() / us / 1e3,
            "tflops": shape.flops() / us / 1e6, "max_error": error,
            "what": getattr(launch, "description", None)}


def commit() -> Optional[str]:
    # MLALAB_COMMIT names it where the tree is a copy without git (the GPU machine).
    if os.environ.get("MLALAB_COMMIT"):
        return os.environ["MLALAB_COMMIT"]
    try:
        return subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def markdown(rows: list[dict], peers: list[str]) -> str:
    lines = ["| H | B | L | mlalab µs | GB/s | TFLOP/s | "
             + " | ".join(f"{p} µs | {p} / mlalab" for p in peers) + " |",
             "|---|---|---|---|---|---|" + "---|---|" * len(peers)]
    ratios = {p: [] for p in peers}
    for row in rows:
        mine = row["results"]["mlalab"]
        cells = [str(row["heads"]), str(row["batch"]), str(row["context"])]
        cells += ([f"{mine['us']:.1f}", f"{mine['gb_per_s']:.0f}", f"{mine['tflops']:.0f}"]
                  if "us" in mine else ["failed", "", ""])
        for peer in peers:
            theirs = row["results"].get(peer, {})
            if "us" in theirs and "us" in mine:
                ratio = theirs["us"] / mine["us"]
                ratios[peer].append(ratio)
                cells += [f"{theirs['us']:.1f}", f"{ratio:.2f}"]
            else:
                cells += ["-", "-"]
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    for peer in peers:
        if ratios[peer]:
            mean = math.exp(sum(map(math.log, ratios[peer])) / len(ratios[peer]))
            lines.append(f"{peer}: geometric mean of its time over mlalab's {mean:.2f} over "
                         f"{len(ratios[peer])} shapes; lowest {min(ratios[peer]):.2f}")
    failures = {}
    for row in rows:
        for name, result in row["results"].items():
            if "error" in result:
                failures.setdefault(name, result["error"])
    for name, error in failures.items():
        lines.append(f"{name}: could not run: {error}")
    return "\n".join(lines)


def int_list(text: str) -> list[int]:
    return [int(item) for item in text.split(",")]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--heads", type=int_list, default=[16, 128])
    parser.add_argument("--batch", type=int_list, default=[1, 8, 32, 64, 128])
    parser.add_argument("--context", type=int_list, default=[1024, 4096, 16384])
    parser.add_argument("--tuning", help="a tuning table for mlalab's dispatch (mlalab tune)")
    parser.add_argument("--json", help="write every measurement here")
    parser.add_argument("--markdown", help="write the table here too")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("peer_table: needs a CUDA GPU (torch.cuda.is_available() is False)",
              file=sys.stderr)
        return 2

    implementations = {
        "mlalab": lambda shape, caches: mlalab_launcher(shape, caches, args.tuning),
        "flashinfer": flashinfer_launcher,
    }
    peers = [name for name in implementations if name != "mlalab"]
    properties = torch.cuda.get_device_properties(0)
    started = datetime.datetime.now(datetime.timezone.utc)
    header = (f"{properties.name}, {properties.multi_processor_count} SMs, torch "
              f"{torch.__version__}, mlalab commit {commit()}, {started:%Y-%m-%d %H:%M} UTC; "
              f"V3, page {PAGE_SIZE}, bf16, CUDA graphs over KV copies ≥ 2 × L2, median of "
              f"{REPLAYS} replays")
    shapes = [(h, b, l) for h in args.heads for b in args.batch for l in args.context]
    rows = []

    def write(partial: bool) -> str:
        # After every shape: an interrupted run keeps what it measured, marked partial.
        note = f"\n\nPARTIAL: {len(rows)} of {len(shapes)} shapes measured" if partial else ""
        table = header + note + "\n\n" + markdown(rows, peers)
        if args.markdown:
            with open(args.markdown, "w") as file:
                file.write(table + "\n")
        if args.json:
            with open(args.json, "w") as file:
                json.dump({"gpu": properties.name, "sm_count": properties.multi_processor_count,
                           "torch": torch.__version__, "commit": commit(),
                           "started_utc": started.isoformat(), "partial": partial,
                           "layout": "v3", "page_size": PAGE_SIZE, "replays": REPLAYS,
                           "rows": rows}, file, indent=1)
        return table

    for index, (heads, batch, context) in enumerate(shapes):
        shape = Shape(heads, batch, context, seed=index)
        caches = [shape.cache] + [shape.cache.clone() for _ in range(shape.copies - 1)]
        results = {name: measure(shape, name, lambda c, m=make, s=shape: m(s, c), caches)
                   for name, make in implementations.items()}
        rows.append({"heads": heads, "batch": batch, "context": context,
                     "kv_copies": shape.copies, "results": results})
        summary = ", ".join(f"{n} {r['us']:.1f} µs" if "us" in r else f"{n} failed"
                            for n, r in results.items())
        print(f"[{index + 1}/{len(shapes)}] H={heads} B={batch} L={context}: {summary}",
              flush=True)
        write(partial=index + 1 < len(shapes))
        del caches, shape
        torch.cuda.empty_cache()
    print("\n" + write(partial=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
