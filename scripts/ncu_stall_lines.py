#!/usr/bin/env python3
"""Where a kernel's warps wait, per source line, from Nsight Compute's source page: the warp
state samples of each CUDA line (its SASS summed), the share of each stall reason over the
whole kernel, and the lines that hold the most samples with their top reasons.

    python3 scripts/ncu_stall_lines.py SOURCE.csv [--top N] [--source-root DIR]

SOURCE.csv is `ncu -i REPORT --page source --csv --print-source cuda,sass` (what the `stalls`
stage of scripts/gpu_session.sh writes as stalls_*_source.log; .xz is read too). Where the
report holds no source text (a build's -lineinfo names the paths of the machine that built it),
the line's text comes from DIR/<path below src/> (default: this checkout), so the lines read as
the build's sources only when the checkout's files are the build's.
Exit status 2 on bad usage or a file with no source lines.
"""
import argparse
import collections
import csv
import io
import itertools
import lzma
import os
import sys

SAMPLES = "Warp Stall Sampling (All Samples)"


def number(text):
    try:
        return float(text)
    except ValueError:
        return 0.0


def read_lines(text):
    """The CUDA lines of a source page: [{file, line, text, samples, reasons: {reason: n}}].
    A file's section starts at its "File Path" row; its header row names the columns; rows
    with a line number are CUDA lines, rows without are the SASS under the last one."""
    lines, path, header = [], None, None
    for row in csv.reader(io.StringIO(text)):
        if not row:
            continue
        if row[0] == "File Path":
            path = row[1] if len(row) > 1 else ""
        elif row[0] == "Line No":
            header = row
        elif header is not None and row[0].isdigit():
            fields = dict(zip(header, row))
            reasons = {name[len("stall_"):]: number(value) for name, value in fields.items()
                       if name.startswith("stall_") and "Not Issued" not in name}
            lines.append({"file": path, "line": int(row[0]), "text": row[1].strip(),
                          "samples": number(fields.get(SAMPLES, "0")), "reasons": reasons})
    return lines


def checkout_text(path, line, root):
    """Line `line` of the checkout's copy of `path` (matched from its `src/` on), or ""."""
    marker = path.rfind("/src/")
    if marker < 0:
        return ""
    try:
        with open(os.path.join(root, path[marker + 1:]), encoding="utf-8") as source:
            return next(itertools.islice(source, line - 1, None), "").strip()
    except OSError:
        return ""


def summary(lines, top, root):
    total = sum(entry["samples"] for entry in lines)
    by_reason = collections.Counter()
    for entry in lines:
        by_reason.update(entry["reasons"])
    out = [f"{total:.0f} warp state samples over {len(lines)} source lines",
           "by reason: " + ", ".join(f"{reason} {count / total:.1%}"
                                     for reason, count in by_reason.most_common(8) if count)]
    out.append(f"{'share':>6}  {'line':<24} top reasons (share of all samples)  source")
    for entry in sorted(lines, key=lambda e: -e["samples"])[:top]:
        reasons = sorted(entry["reasons"].items(), key=lambda item: -item[1])[:3]
        text = entry["text"]
        if text in ("", "-") or text.startswith("<Unable to open"):
            text = checkout_text(entry["file"], entry["line"], root)
        place = f"{os.path.basename(entry['file'])}:{entry['line']}"
        why = ", ".join(f"{reason} {count / total:.1%}" for reason, count in reasons if count)
        out.append(f"{entry['samples'] / total:6.1%}  {place:<24} {why:<36} {text[:80]}")
    return "\n".join(out)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source_csv")
    parser.add_argument("--top", type=int, default=20, help="lines to list (default 20)")
    parser.add_argument("--source-root", default=os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), help="checkout that holds src/ (default: this one)")
    args = parser.parse_args()
    opener = lzma.open if args.source_csv.endswith(".xz") else open
    with opener(args.source_csv, "rt", encoding="utf-8", errors="replace") as source:
        lines = read_lines(source.read())
    if not lines or sum(entry["samples"] for entry in lines) == 0:
        print(f"ncu_stall_lines: {args.source_csv}: no source lines with samples (is it "
              "ncu's --page source --csv --print-source cuda,sass?)", file=sys.stderr)
        return 2
    print(summary(lines, args.top, args.source_root))
    return 0


if __name__ == "__main__":
    sys.exit(main())
