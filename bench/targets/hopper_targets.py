#!/usr/bin/env python3
"""Issue 12's targets (Hopper MLA decode at the roofline), measured with `mlalab bench` and judged.

    python3 bench/targets/hopper_targets.py --mlalab build/bin/mlalab --out DIR
    python3 bench/targets/hopper_targets.py --judge DIR

The first form runs every `mlalab bench` the targets need on the CUDA backend (each writes
DIR/NAME.json and DIR/NAME.log; without a usable GPU it stops at the first), then judges them;
the second judges the JSON already in DIR (to re-check a committed result, or after a run was
cut short). Judging writes DIR/targets.md (the table: each target, the best row that answers
it, met / missed / not measured) and DIR/targets.json, and prints the table. Every target
takes the fastest of the variants timed (--variants), so a target missed here may still be met
by a variant not timed.

The targets (V3 layout, page 64, every sequence L tokens, pages scattered, unless said):
bandwidth and latency at H = 16, TFLOP/s at H = 128, the V4 layout at V3's rate, page 1
within 15 % of page 64 for the wgmma family, and mixed lengths (uniform in 1,024-8,192)
within 10 % of equal lengths per token; and, given bench/peers/peer_table.py's JSON (--peers,
or DIR/peers.json), the peer table: a geometric mean of the best peer's time over mlalab's
≥ 1.1 over its shapes, and no shape below 0.95.
"""
from __future__ import annotations

import argparse
import json
import math
import os
import pathlib
import subprocess
import sys
from typing import Callable, Optional

DEFAULT_VARIANTS = ("h16_t16_w4_s2,h16_t32_w4_s2,wgmma_h64_t32_w8_s4,wgmma_h64_t64_w8_s2,"
                    "wgmma_h16_t64_w4_s2,wgmma_h16_t64_w4_s3")
# Equal lengths with the same tokens as lengths uniform in [1,024, 8,192]: their mean.
MIXED_CONTEXT, MIXED_FRACTION, MIXED_MEAN = 8192, 0.125, 4608
V4_TOLERANCE = 0.95      # "the same bandwidth and TFLOP/s": at least 95 % of V3's
PAGE1_TOLERANCE = 1.15   # page 1 at most 15 % slower than page 64
MIXED_TOLERANCE = 1.10   # mixed lengths at most 10 % slower per token than equal ones
PEER_MEAN, PEER_FLOOR = 1.1, 0.95  # the best peer's time over mlalab's: mean, every shape

# name → `mlalab bench` arguments (the variants are added).
RUNS: dict[str, list[str]] = {
    "h16_v3": ["--heads", "16", "--batch", "1,8,32,64,128", "--context", "4096"],
    "h16_v3_16k": ["--heads", "16", "--batch", "1", "--context", "16384"],
    "h128_v3": ["--heads", "128", "--batch", "32,64,128", "--context", "4096"],
    "h16_v4": ["--layout", "v4", "--heads", "16", "--batch", "64", "--context", "4096"],
    "h128_v4": ["--layout", "v4", "--heads", "128", "--batch", "64,128", "--context", "4096"],
    "page1": ["--heads", "16,128", "--batch", "64", "--context", "4096", "--page-size", "1"],
    "equal_mean": ["--heads", "16,128", "--batch", "64", "--context", str(MIXED_MEAN)],
    "mixed_heuristic": ["--heads", "16,128", "--batch", "64", "--context", str(MIXED_CONTEXT),
                        "--lengths", f"uniform:{MIXED_FRACTION}"],
    "mixed_balanced": ["--heads", "16,128", "--batch", "64", "--context", str(MIXED_CONTEXT),
                       "--lengths", f"uniform:{MIXED_FRACTION}", "--split", "balanced"],
}


def run_benches(mlalab: str, out: pathlib.Path, variants: str) -> None:
    for name, arguments in RUNS.items():
        # `--heads` takes one value: runs that name two are split into one call per value.
        heads = arguments[arguments.index("--heads") + 1].split(",")
        for head_count in heads:
            stem = name if len(heads) == 1 else f"{name}_h{head_count}"
            call = [mlalab, "bench", *arguments, "--variant", variants, "--backend", "cuda",
                    "--json", str(out / f"{stem}.json")]
            call[call.index("--heads") + 1] = head_count
            print(f"hopper_targets: {' '.join(call[1:])}", flush=True)
            with open(out / f"{stem}.log", "w") as log:
                status = subprocess.run(call, stdout=log, stderr=subprocess.STDOUT).returncode
            if status == 2:  # a usage error, or no usable GPU: every other run would fail too
                raise SystemExit(f"hopper_targets: {stem} stopped before timing anything: "
                                 f"{(out / f'{stem}.log').read_text().strip()[-400:]}")
            if status != 0:
                print(f"hopper_targets: {stem} exited with {status} (see {stem}.log); its "
                      "valid rows still count", flush=True)


def load_rows(out: pathlib.Path) -> tuple[list[dict], list[float], set[str]]:
    """Every ok row of DIR's bench JSON, each tagged with its run (`run`) and lengths; the
    streaming-read figures; the commits."""
    rows, reads, commits = [], [], set()
    for path in sorted(out.glob("*.json")):
        if path.name == "targets.json":
            continue
        try:
            document = json.loads(path.read_text())
        except (OSError, json.JSONDecodeError):
            continue
        environment = document.get("environment", {})
        if "read_gbps" in environment:
            reads.append(environment["read_gbps"])
        if environment.get("commit"):
            commits.add(environment["commit"])
        for row in document.get("rows", []):
            if "variant" in row and "us" in row:  # a bench row (not a peer table's)
                rows.append({**row, "run": path.stem,
                             "lengths": document.get("lengths", "equal")})
    return rows, reads, commits


def best(rows: list[dict], keep: Callable[[dict], bool]) -> Optional[dict]:
    candidates = [row for row in rows if keep(row)]
    return min(candidates, key=lambda row: row["us"]) if candidates else None


def shape(layout="v3", heads=None, batch=None, context=None, page=64, lengths="equal",
          family: Optional[str] = None) -> Callable[[dict], bool]:
    def keep(row: dict) -> bool:
        return (row.get("layout", "v3") == layout and row.get("page_size", 64) == page
                and (heads is None or row["heads"] == heads)
                and (batch is None or row["batch"] == batch)
                and (context is None or row["context"] == context)
                and row["lengths"].startswith(lengths)
                and (family is None or row["variant"].startswith(family)))
    return keep


def described(row: dict) -> str:
    if row.get("workers"):
        split = f"balanced:{row['workers']}"
    else:
        split = f"{row['splits']} split{'s' if row['splits'] != 1 else ''}"
    return f"{row['variant']}, {split}"


def peer_ratios(path: pathlib.Path) -> Optional[list[float]]:
    """Per shape of a peer table, the best peer's time over mlalab's (None: no such file)."""
    try:
        document = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError):
        return None
    ratios = []
    for row in document.get("rows", []):
        results = row.get("results", {})
        mine = results.get("mlalab", {}).get("us")
        peers = [result["us"] for name, result in results.items()
                 if name != "mlalab" and result.get("us")]
        if mine and peers:
            ratios.append(min(peers) / mine)
    return ratios


def judge(rows: list[dict], peers: Optional[list[float]] = None) -> list[dict]:
    """One entry per target: target, measured, variant, status (met / missed / not measured)."""
    results = []

    def add(target: str, measured: Optional[str], row: Optional[dict], met: Optional[bool]):
        results.append({"target": target, "measured": measured or "—",
                        "variant": described(row) if row else "—",
                        "status": "not measured" if met is None else ("met" if met else "missed")})

    for batch, floor in ((32, 3.6), (64, 3.95), (128, 4.2)):
        row = best(rows, shape(heads=16, batch=batch, context=4096))
        tbps = row["gbps"] / 1000 if row else None
        add(f"H = 16, L = 4,096, B = {batch}: ≥ {floor} TB/s",
            row and f"{tbps:.2f} TB/s ({row['us']:.1f} µs)", row, row and tbps >= floor)
    for batch, context, ceiling in ((1, 4096, 10.0), (8, 4096, 14.0), (1, 16384, 15.0)):
        row = best(rows, shape(heads=16, batch=batch, context=context))
        add(f"H = 16, L = {context:,}, B = {batch}: ≤ {ceiling:g} µs",
            row and f"{row['us']:.1f} µs", row, row and row["us"] <= ceiling)
    for batch, floor in ((32, 550), (64, 650), (128, 650)):
        row = best(rows, shape(heads=128, batch=batch, context=4096))
        add(f"H = 128, L = 4,096, B = {batch}: ≥ {floor} TFLOP/s",
            row and f"{row['tflops']:.0f} TFLOP/s ({row['us']:.1f} µs)", row,
            row and row["tflops"] >= floor)

    # V4 at V3's rate: the same per-row figure (TB/s at H = 16, TFLOP/s at H = 128).
    for heads, batch, metric, unit in ((16, 64, "gbps", "GB/s"), (128, 64, "tflops", "TFLOP/s"),
                                       (128, 128, "tflops", "TFLOP/s")):
        v4 = best(rows, shape(layout="v4", heads=heads, batch=batch, context=4096))
        v3 = best(rows, shape(heads=heads, batch=batch, context=4096))
        ratio = v4[metric] / v3[metric] if v4 and v3 and v3[metric] > 0 else None
        add(f"V4 at V3's rate (≥ {V4_TOLERANCE:.0%}), H = {heads}, B = {batch}",
            ratio and f"{v4[metric]:.0f} against {v3[metric]:.0f} {unit} ({ratio:.1%})", v4,
            ratio and ratio >= V4_TOLERANCE)

    for heads in (16, 128):
        page1 = best(rows, shape(heads=heads, batch=64, context=4096, page=1, family="wgmma"))
        page64 = best(rows, shape(heads=heads, batch=64, context=4096, family="wgmma"))
        ratio = page1["us"] / page64["us"] if page1 and page64 else None
        add(f"page 1 within {PAGE1_TOLERANCE - 1:.0%} of page 64 (wgmma), H = {heads}, B = 64",
            ratio and f"{page1['us']:.1f} against {page64['us']:.1f} µs ({ratio - 1:+.1%})",
            page1, ratio and ratio <= PAGE1_TOLERANCE)

    for heads in (16, 128):
        mixed = best(rows, shape(heads=heads, batch=64, context=MIXED_CONTEXT, lengths="uniform"))
        equal = best(rows, shape(heads=heads, batch=64, context=MIXED_MEAN))
        measured, ratio = None, None
        if mixed and equal:
            mixed_ns, equal_ns = (1e3 * row["us"] / row["tokens"] for row in (mixed, equal))
            ratio = mixed_ns / equal_ns
            measured = f"{mixed_ns:.2f} against {equal_ns:.2f} ns/token ({ratio - 1:+.1%})"
        add(f"mixed lengths (1,024-8,192) within {MIXED_TOLERANCE - 1:.0%} of equal per token, "
            f"H = {heads}, B = 64", measured, mixed, ratio and ratio <= MIXED_TOLERANCE)

    mean = math.exp(sum(map(math.log, peers)) / len(peers)) if peers else None
    results.append({
        "target": f"peer table: geometric mean ≥ {PEER_MEAN}×, no shape below {PEER_FLOOR}×",
        "measured": (f"{mean:.2f}× over {len(peers)} shapes, lowest {min(peers):.2f}×"
                     if mean else "—"),
        "variant": "mlalab's dispatch (peer_table.py)" if mean else "—",
        "status": ("not measured" if mean is None
                   else "met" if mean >= PEER_MEAN and min(peers) >= PEER_FLOOR else "missed")})
    return results


def markdown(results: list[dict], reads: list[float], commits: set[str]) -> str:
    read = (f"streaming read {min(reads):,.0f}-{max(reads):,.0f} GB/s in the same runs"
            if reads else "no streaming-read figure")
    lines = [f"Issue 12's targets, `mlalab bench` at commit {', '.join(sorted(commits)) or '?'}; "
             f"{read}. Each target: the fastest row of the variants timed.", "",
             "| target | measured | best row | status |", "|---|---|---|---|"]
    lines += [f"| {r['target']} | {r['measured']} | {r['variant']} | {r['status']} |"
              for r in results]
    met = sum(r["status"] == "met" for r in results)
    lines += ["", f"{met} of {len(results)} met; "
              f"{sum(r['status'] == 'not measured' for r in results)} not measured."]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="\n".join(__doc__.split("\n")[1:]))
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--mlalab", help="the mlalab binary: run the benches into --out")
    action.add_argument("--judge", metavar="DIR", help="judge the bench JSON already in DIR")
    parser.add_argument("--out", help="with --mlalab: the folder for the JSON, logs and table")
    parser.add_argument("--peers", metavar="FILE",
                        help="bench/peers/peer_table.py's JSON (default: DIR/peers.json)")
    parser.add_argument("--variants", default=DEFAULT_VARIANTS, metavar="LIST",
                        help=f"variants to time, comma-separated; default: {DEFAULT_VARIANTS}")
    args = parser.parse_args()
    if args.mlalab and not args.out:
        parser.error("--mlalab needs --out DIR")
    if args.mlalab and not (os.path.isfile(args.mlalab) and os.access(args.mlalab, os.X_OK)):
        parser.error(f"--mlalab {args.mlalab}: not an executable file (build it first: "
                     "MLALAB_CUDA_ARCHS=90a bash scripts/build.sh)")
    if args.out and pathlib.Path(args.out).exists() and not pathlib.Path(args.out).is_dir():
        parser.error(f"--out {args.out}: exists and is not a folder")
    out = pathlib.Path(args.out or args.judge)
    if args.mlalab:
        out.mkdir(parents=True, exist_ok=True)
        run_benches(args.mlalab, out, args.variants)
    elif not out.is_dir():
        parser.error(f"--judge {out}: no such folder")
    rows, reads, commits = load_rows(out)
    results = judge(rows, peer_ratios(pathlib.Path(args.peers) if args.peers
                                      else out / "peers.json"))
    table = markdown(results, reads, commits)
    (out / "targets.md").write_text(table)
    (out / "targets.json").write_text(json.dumps(
        {"commits": sorted(commits), "read_gbps": reads, "targets": results}, indent=2) + "\n")
    print(table, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
