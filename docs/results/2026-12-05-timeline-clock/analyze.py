#!/usr/bin/env python3
"""Per row of run1.sh's timelines: the SM clock over the call, and each CTA's time (in µs at
its own clock: cycles / (its cycles per µs)) to knowing its work, to q's issue, to its first
tile's issue and landing, per tile in the MMA warps (landed -> freed) and waiting (asked ->
landed), and from its last tile's free to its part's end.
    python3 analyze.py DIR   (DIR: the unpacked clock/ folder, timeline_*.json[.xz])"""
import glob
import json
import lzma
import os
import statistics as st
import sys


def load(path):
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def med(values):
    return f"{st.median(values):.2f}" if values else "-"


def row_figures(row):
    ctas = row["ctas"]
    # Each tile's events in the order the JSON names them (mlalab's ring_summary.tile_events).
    E = {name: i for i, name in enumerate(row["ring_summary"]["tile_events"])}
    clocks, first_issue, first_land, compute, wait, tail, period = [], [], [], [], [], [], []
    work_known, q_issued = [], []
    for cta in ctas:
        if not cta["parts"]:
            continue
        part = cta["parts"][-1]
        ns = (part["end_us"] - cta["start_us"]) * 1000.0
        if ns < 1000.0:
            continue
        mhz = part["end_cycles"] / ns * 1000.0
        clocks.append(mhz)
        us = lambda cycles: cycles / mhz
        ring = cta["ring"]
        tiles = ring["tiles"]
        work_known.append(us(ring["work_known"]))
        if ring["q_issued"] is not None:
            q_issued.append(us(ring["q_issued"]))
        first_issue.append(us(tiles[0][E["first_issued"]]))
        if tiles[0][E["first_landed"]] is None:
            continue
        first_land.append(us(tiles[0][E["first_landed"]]))
        for t, tile in enumerate(tiles):
            freed = max(tile[E["first_freed"]], tile[E["rest_freed"]])
            compute.append(us(freed - tile[E["rest_landed"]]))
            wait.append(us(tile[E["rest_landed"]] - tile[E["landed_wait"]]))
            if t > 0:
                period.append(us(tile[E["rest_landed"]] - tiles[t - 1][E["rest_landed"]]))
        if cta["ring"]["tiles_total"] == len(tiles):  # the last tile recorded
            last = max(tiles[-1][E["first_freed"]], tiles[-1][E["rest_freed"]])
            tail.append(us(part["end_cycles"] - last))
    return {
        "us": f"{row['us']:.1f}", "ctas": len(ctas),
        "clock": (f"{min(clocks):.0f} / {st.median(clocks):.0f} / {max(clocks):.0f}"
                  if clocks else "-"),
        "end": f"{row['summary']['min_end_us']:.1f} / {row['summary']['median_end_us']:.1f} / "
               f"{row['summary']['max_end_us']:.1f}",
        "work known": med(work_known), "q issued": med(q_issued),
        "first issue": med(first_issue), "first landed": med(first_land),
        "landed->freed": med(compute), "asked->landed": med(wait), "tile period": med(period),
        "last free->end": med(tail),
    }


def main():
    folder = sys.argv[1] if len(sys.argv) > 1 else "."
    keys = None
    for path in sorted(glob.glob(os.path.join(folder, "timeline_*.json*"))):
        for row in load(path):
            figures = row_figures(row)
            if keys is None:
                keys = list(figures)
                print("| row | " + " | ".join(keys) + " |")
                print("|---" * (len(keys) + 1) + "|")
            name = f"H{row['heads']} B{row['batch']} {row['variant']} {row['splits']} splits"
            print(f"| {name} | " + " | ".join(str(figures[k]) for k in keys) + " |")


if __name__ == "__main__":
    main()
