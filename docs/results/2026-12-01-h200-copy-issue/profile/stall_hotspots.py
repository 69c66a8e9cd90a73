"""Where the warps of a kernel wait, from ncu's per-instruction stall sampling.

    python3 stall_hotspots.py sass_heuristic.csv.gz sass_balanced.csv.gz

Each file is `ncu -i REPORT --page source --csv --print-source sass` of one decode kernel
(SourceCounters section). Prints the samples per stall reason over the whole kernel, then the
25 instructions with the most samples (offset from the kernel's first instruction, samples,
times executed, the instruction, its top three stall reasons).
"""
import csv
import gzip
import sys


def load(path):
    rows = list(csv.reader(gzip.open(path, "rt")))
    header, data = rows[1], rows[2:]
    column = {name: i for i, name in enumerate(header)}
    reasons = [h for h in header if h.startswith("stall_") and "Not Issued" not in h]
    base = int(data[0][0], 16)
    for row in data:
        yield (int(row[0], 16) - base, row[1].strip(),
               int(row[column["Warp Stall Sampling (All Samples)"]] or 0),
               {r[len("stall_"):]: int(row[column[r]] or 0) for r in reasons},
               int(row[column["Instructions Executed"]] or 0))


def top(counts, n):
    return sorted(((v, k) for k, v in counts.items() if v), reverse=True)[:n]


for path in sys.argv[1:]:
    instructions = list(load(path))
    print(f"== {path}: {sum(i[2] for i in instructions)} samples")
    totals = {}
    for _, _, _, stalls, _ in instructions:
        for reason, samples in stalls.items():
            totals[reason] = totals.get(reason, 0) + samples
    print("  ", top(totals, 10))
    for offset, sass, samples, stalls, executed in sorted(instructions, key=lambda i: -i[2])[:25]:
        print(f"  {offset:6x} {samples:6d} {executed:8d} {sass[:60]:60s} {top(stalls, 3)}")
