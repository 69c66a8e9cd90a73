#!/usr/bin/env python3
"""The A/A offsets of the instance labs (aa-one.toml, aa-eight.toml): per run and point, the
A/A check (A′ against A) and each copy's change against the baseline, in %, and their spread.

    python3 docs/results/2026-12-08-instances/offsets.py RESULTS_JSON...

Every arm runs the same kernel, so each figure is an offset of the harness, not of the code.
"""
import json
import lzma
import statistics
import sys


def load(path):
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt") as file:
        return json.load(file)


def main():
    print("| run | instances | C | splits | A′ | " + " | ".join(
        f"copy {i}" for i in (1, 2, 3)) + " | spread (max − min) | mean ± s.e. of a copy |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for path in sys.argv[1:]:
        results = load(path)
        instances = results["experiment"]["measure"].get("instances_per_arm", 1)
        splits = {p["concurrency"]: p.get("splits") for p in results["points"]}
        noise = {n["concurrency"]: n["a_a"] for n in results["analysis"]["noise"]}
        for concurrency in sorted(noise):
            offsets = [noise[concurrency]["change_pct"]]
            errors = []
            for variant in results["analysis"]["variants"]:
                point = next(p for p in variant["points"] if p["concurrency"] == concurrency)
                offsets.append(point["change"]["change_pct"])
                errors.append(100 * point["change"]["standard_error_log"])
            spread = max(offsets + [0.0]) - min(offsets + [0.0])
            cells = " | ".join(f"{x:+.2f}" for x in offsets)
            print(f"| {results['started_utc']} | {instances} | {concurrency} | "
                  f"{splits[concurrency]} | {cells} | {spread:.2f} | "
                  f"±{statistics.mean(errors):.2f} |")


if __name__ == "__main__":
    main()
