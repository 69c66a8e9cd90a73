#!/usr/bin/env python3
"""A kernel change's landing rule, written before its lab ran, applied to the lab's results.

    python3 scripts/lab_decision.py RESULTS_JSON --gain-at C [--gain-at C ...]

The change (every variant arm of the experiment against its baseline) lands when no point is
SLOWER or a negative SMALL_CHANGE, and at each concurrency C given the change's interval lies
wholly above 0: the point it is for has gained, and nowhere has it cost. Prints one line per
point and the decision. Exit 0: it lands; 1: it stays out; 2: the results cannot say (no such
file, no point at a C asked for).
"""
import argparse
import json
import sys


def decide(results, gain_at):
    """(lines, lands): one line per measured point and whether the rule lands the change."""
    lines = []
    lands = True
    for variant in results["analysis"]["variants"]:
        by_concurrency = {point["concurrency"]: point for point in variant["points"]}
        missing = [c for c in gain_at if c not in by_concurrency]
        if missing:
            raise ValueError(f"{variant['name']}: no point at concurrency {missing}")
        for concurrency, point in sorted(by_concurrency.items()):
            change = point.get("change")
            verdict = point["verdict"]
            if change is None:
                lines.append(f"{variant['name']} C{concurrency}: not measured ({verdict})")
                lands = lands and concurrency not in gain_at
                continue
            lines.append(f"{variant['name']} C{concurrency}: {change['change_pct']:+.2f} % "
                         f"[{change['lower_pct']:+.2f}, {change['upper_pct']:+.2f}] {verdict}")
            if verdict == "SLOWER" or (verdict == "SMALL_CHANGE" and change["change_pct"] < 0):
                lands = False
            if concurrency in gain_at and not change["lower_pct"] > 0:
                lands = False
    if results.get("partial"):
        lines.append(f"partial: {results.get('partial_reason')}")
    return lines, lands


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("results", help="a lab's results.json (mlalab ab --out)")
    parser.add_argument("--gain-at", type=int, action="append", required=True, metavar="C",
                        help="a concurrency whose change must lie wholly above 0")
    args = parser.parse_args()
    try:
        with open(args.results) as file:
            results = json.load(file)
        lines, lands = decide(results, args.gain_at)
    except (OSError, ValueError, KeyError) as error:
        print(f"lab_decision.py: {args.results}: {error}", file=sys.stderr)
        return 2
    print("\n".join(lines))
    print("lands" if lands else "stays out")
    return 0 if lands else 1


if __name__ == "__main__":
    sys.exit(main())
