#!/usr/bin/env python3
"""The split heuristic's wave model against this folder's fixed-split grid, and a proposed one.

    python3 split_model.py        (reads the JSON beside it; no GPU needed)

For every measured key (variant, heads, batch, length) each model picks the split count it
costs lowest among the counts measured (1, 2, 4, 8; 1, 2, 4 at H = 128); printed: the sum of
the picked times against the sum of the best, the keys where a pick is > 3 % off, then the
keys where the two models pick differently over every count the heuristic allows.

now:      split_plan.cpp's model: 16 · waves · (steps per split + 2) + splits.
proposed: a wave whose CTAs stream more than 0.8 of the wave's slots is slower per step in
          proportion (HBM saturates before the SMs do: 96 one-CTA-per-SM CTAs already take
          1.0 µs per step, 128 take 1.16), and the fp32 partial rows a split launch writes and
          the combine reads (2 · batch · heads · splits · 512 · 4 bytes) cost their bytes over
          the KV bytes a full wave reads per step.
"""
import glob
import json
import math
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SMS = 132
PROLOGUE_STEPS = 2
SATURATION = 0.8

config = {row["name"]: row for row in json.load(open(os.path.join(HERE, "configs.json")))}
measured, heuristic = {}, {}
for path in glob.glob(os.path.join(HERE, "*.json")):
    if path.endswith("configs.json"):
        continue
    for row in json.load(open(path))["rows"]:
        key = (row["variant"], row["heads"], row["batch"], row["context"])
        if path.endswith("_heuristic.json"):
            heuristic[key] = (row["splits"], row["us"])
        else:
            measured.setdefault(key, {})[row["splits"]] = row["us"]


def cost(key, splits, model):
    variant, heads, batch, length = key
    c = config[variant]
    block_t, slots = c["block_t"], SMS * c["max_ctas_per_sm"]
    ctas = batch * math.ceil(heads / c["block_h"]) * splits
    per_cta = math.ceil(math.ceil(length / block_t) / splits) + PROLOGUE_STEPS
    if model == "now":
        return 16 * math.ceil(ctas / slots) * per_cta + splits
    steps, left = 0.0, ctas
    while left > 0:
        wave = min(left, slots)
        left -= wave
        steps += per_cta * max(1.0, wave / (SATURATION * slots))
    if splits > 1:
        steps += 2 * batch * heads * splits * 512 * 4 / (slots * block_t * 576 * 2)
    return 16 * steps + splits


def pick(key, model, counts):
    return min(counts, key=lambda s: (cost(key, s, model), s))


for model in ("now", "proposed"):
    total = best = 0.0
    off = []
    for key, times in sorted(measured.items()):
        chosen = pick(key, model, sorted(times))
        fastest = min(times.values())
        total += times[chosen]
        best += fastest
        if times[chosen] > 1.03 * fastest:
            off.append((round(100 * (times[chosen] / fastest - 1), 1), key, chosen))
    print(f"{model}: {total:.0f} µs against the best {best:.0f} (+{100 * (total / best - 1):.1f} %)")
    for entry in sorted(off, reverse=True):
        print("   ", entry)

print("where the two differ over every allowed count (µs measured at the proposed count, if any):")
for key, times in sorted(measured.items()):
    block_t = config[key[0]]["block_t"]
    cap = max(1, min(128, math.ceil(key[3] / block_t) // min(4, math.ceil(128 / block_t))))
    now, proposed = (pick(key, m, range(1, cap + 1)) for m in ("now", "proposed"))
    if now != proposed:
        print(f"   {key}: now {now} ({heuristic.get(key)}), proposed {proposed} ({times.get(proposed)})")
