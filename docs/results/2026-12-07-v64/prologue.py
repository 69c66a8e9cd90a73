#!/usr/bin/env python3
"""A CTA's prologue in each row of `mlalab bench --timeline` files: medians over the CTAs (in
their SM's cycles from the CTA's start) of when thread 0 knew its work, when q's copy was
issued, when the first KV tile's first piece was issued and landed, and when the part ended;
then the row's call time. Version 64's reading (docs/perf-notes.md).
    python3 prologue.py FILE.json[.xz] ..."""
import json
import lzma
import statistics as st
import sys


def load(path):
    opener = lzma.open if path.endswith(".xz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def median(values):
    return int(st.median(values)) if values else -1


for path in sys.argv[1:]:
    for row in load(path):
        event = {name: i for i, name in enumerate(row["ring_summary"]["tile_events"])}
        columns = {name: [] for name in
                   ("known", "q_issue", "q_issued", "first_issued", "first_landed", "end")}
        for cta in row["ctas"]:
            ring = cta.get("ring")
            if not ring or not cta["parts"] or not ring["tiles"]:
                continue
            tile0 = ring["tiles"][0]
            columns["known"].append(ring["work_known"])
            columns["q_issue"].append(ring["q_issue"])
            columns["q_issued"].append(ring["q_issued"])
            columns["first_issued"].append(tile0[event["first_issued"]])
            columns["first_landed"].append(tile0[event["first_landed"]])
            columns["end"].append(cta["parts"][-1]["end_cycles"])
        figures = " ".join(f"{name} {median(values)}" for name, values in columns.items())
        print(f"{path}: H {row['heads']} B {row['batch']} {row['variant']}: "
              f"{len(columns['known'])} CTAs; {figures}; {row['us']:.2f} us")
