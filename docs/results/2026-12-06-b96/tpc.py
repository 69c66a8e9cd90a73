#!/usr/bin/env python3
"""Per row of the timelines in DIR: each CTA's end (µs from the launch) by whether the other
SM of its TPC (SMs 2k and 2k + 1) ran a CTA too: whether CTAs that share a TPC finish later.
    python3 tpc.py DIR   (DIR: timeline_*.json[.xz])"""
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


for path in sorted(glob.glob(os.path.join(sys.argv[1], "timeline_*.json*"))):
    for row in load(path):
        sms = {cta["sm"] for cta in row["ctas"]}
        ends = {True: [], False: []}
        for cta in row["ctas"]:
            ends[(cta["sm"] ^ 1) in sms].append(max(part["end_us"] for part in cta["parts"]))
        line = [f"{os.path.basename(path)}: B={row['batch']} {row['us']:.1f} us"]
        for shared, name in ((False, "alone"), (True, "paired")):
            values = ends[shared]
            if values:
                line.append(f"{name} {len(values)} CTAs end median {st.median(values):.1f} "
                            f"max {max(values):.1f}")
        print("; ".join(line))
