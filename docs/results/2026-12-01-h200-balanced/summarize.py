#!/usr/bin/env python3
"""The issue-9 target table from the four mlalab ab runs of this folder.

    python3 summarize.py ab/

For each head count and batch: the median µs per call of the split heuristic and of the
balanced grid, on lengths drawn uniformly from 1,024 to 8,192 (mixed) and on equal lengths of
4,608 (equal), and the balanced grid's mixed-length time against equal lengths of the same
tokens: the draw's token count differs from B * 4,608 (by +10 % at B = 8), so the comparison
is per token. Medians are of the non-throttled samples (`time_us` in results.json, committed
as results.json.xz: scripts/compress_results.sh).
"""
import json
import lzma
import re
import statistics
import sys
from pathlib import Path


def medians(run_dir):
    """{(concurrency, arm name): (median µs, tokens)} of one run."""
    plain = run_dir / "results.json"
    results = json.loads(plain.read_text() if plain.exists()
                         else lzma.open(run_dir / "results.json.xz", "rt").read())
    names = [arm["name"] for arm in results["arms"]]
    out = {}
    for index, point in enumerate(results["points"]):
        tokens = sum(point["context_lengths"])
        for arm, name in enumerate(names):
            times = [s["time_us"] for s in results["samples"]
                     if s["point"] == index and s["arm"] == arm and not s["throttled"]]
            if times:
                out[(point["concurrency"], name)] = (statistics.median(times), tokens)
    return out


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "ab")
    runs = {}
    for run_dir in sorted(root.iterdir()):
        name = re.sub(r"-\d{8}T\d{6}Z$", "", run_dir.name)  # as mlalab ab names it, or not
        if re.fullmatch(r"(mixed|equal)-lengths(-h128)?", name):
            runs[name] = medians(run_dir)
    print("| H | B | mixed: heuristic µs | mixed: balanced µs | equal: heuristic µs | "
          "equal: balanced µs | balanced mixed vs equal, per token: against heuristic | "
          "against balanced |")
    print("|---|---|---|---|---|---|---|---|")
    for heads, suffix in ((16, ""), (128, "-h128")):
        if f"mixed-lengths{suffix}" not in runs or f"equal-lengths{suffix}" not in runs:
            continue  # that H was not run
        mixed, equal = runs[f"mixed-lengths{suffix}"], runs[f"equal-lengths{suffix}"]
        for batch in sorted({c for c, _ in mixed}):
            (mh, mixed_tokens), (mb, _) = mixed[(batch, "heuristic")], mixed[(batch, "balanced")]
            (eh, equal_tokens), (eb, _) = equal[(batch, "heuristic")], equal[(batch, "balanced")]
            per_token = lambda t, n: t / n  # noqa: E731
            vs_heuristic = per_token(mb, mixed_tokens) / per_token(eh, equal_tokens) - 1
            vs_balanced = per_token(mb, mixed_tokens) / per_token(eb, equal_tokens) - 1
            print(f"| {heads} | {batch} | {mh:.1f} | {mb:.1f} | {eh:.1f} | {eb:.1f} | "
                  f"{vs_heuristic:+.1%} | {vs_balanced:+.1%} |")
        print("\ntokens per batch, mixed against equal: " + ", ".join(
            f"B={c}: {mixed[(c, 'heuristic')][1]:,} / {equal[(c, 'heuristic')][1]:,}"
            for c in sorted({c for c, _ in mixed})))


if __name__ == "__main__":
    main()
