#!/usr/bin/env python3
"""Where two builds of a kernel differ in machine code, instruction by instruction.

    python3 scripts/sass_diff.py OLD[:KERNEL] NEW[:KERNEL] [--lines N]

OLD and NEW: a cubin, an object or an executable (whatever cuobjdump -sass reads); KERNEL: a
regular expression that picks one function of each by its mangled name (the default: the
file's only function). The instructions are aligned as sequences with their addresses and
immediates masked, so a change that moves code shows as the instructions it adds or drops,
not as every address after it. Prints each changed region (its address in both and its first
N instructions on each side), then how many instructions are equal, and where each kernel's
wgmma (HGMMA) instructions lie: the step loop's place.

Why: a change to one path of a kernel (version 68: the split pair's merge) moved launches
that never run it by 1-1.5 % (docs/perf-notes.md, versions 68 and 70); this shows which code
moved. cuobjdump (and the nvdisasm it runs) come from $CUOBJDUMP, PATH, or PyPI's
nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm, installed into .deps/cuobjdump on first use
(the CUDA toolkit here lacks them).
"""
import argparse
import difflib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WHEEL_DIR = ROOT / ".deps" / "cuobjdump"
FUNCTION = re.compile(r"Function : (\S+)")
INSTRUCTION = re.compile(r"\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
IMMEDIATE = re.compile(r"0x[0-9a-f]+")


def cuobjdump():
    """The cuobjdump to run: $CUOBJDUMP, PATH's, or the PyPI wheels' (installed if missing;
    their bin folder joins PATH, where cuobjdump looks for nvdisasm)."""
    if os.environ.get("CUOBJDUMP"):
        return os.environ["CUOBJDUMP"]
    if shutil.which("cuobjdump"):
        return shutil.which("cuobjdump")
    found = sorted(WHEEL_DIR.glob("nvidia/*/bin/cuobjdump"))
    if not found:
        print(f"sass_diff: installing cuobjdump and nvdisasm from PyPI into {WHEEL_DIR}",
              file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--target",
                        str(WHEEL_DIR), "nvidia-cuda-cuobjdump", "nvidia-cuda-nvdisasm"],
                       check=True)
        found = sorted(WHEEL_DIR.glob("nvidia/*/bin/cuobjdump"))
    if not found:
        sys.exit("sass_diff: no cuobjdump (set CUOBJDUMP to one)")
    os.environ["PATH"] = f"{found[-1].parent}{os.pathsep}{os.environ['PATH']}"
    return str(found[-1])


def parse_sass(text):
    """{mangled name: [(address, instruction)]} of cuobjdump -sass output."""
    functions, current = {}, None
    for line in text.splitlines():
        if match := FUNCTION.search(line):
            current = functions.setdefault(match.group(1), [])
        elif current is not None and (match := INSTRUCTION.match(line)):
            current.append((int(match.group(1), 16), match.group(2)))
    return functions


def pick(functions, pattern, source):
    names = [name for name in functions if re.search(pattern or "", name)]
    if len(names) != 1:
        listed = "\n  ".join(functions) or "(none)"
        sys.exit(f"sass_diff: {source}: {len(names)} functions match '{pattern or ''}'; "
                 f"there are:\n  {listed}")
    return names[0], functions[names[0]]


def changed_regions(old, new):
    """[(old slice, new slice)] where the masked instruction sequences differ."""
    masked = [[IMMEDIATE.sub("X", text) for _, text in code] for code in (old, new)]
    matcher = difflib.SequenceMatcher(None, *masked, autojunk=False)
    return [(slice(i1, i2), slice(j1, j2))
            for tag, i1, i2, j1, j2 in matcher.get_opcodes() if tag != "equal"]


def wgmma_span(code):
    addresses = [address for address, text in code if "HGMMA" in text]
    return f"{len(addresses)} HGMMA at 0x{addresses[0]:x}-0x{addresses[-1]:x}" if addresses \
        else "no HGMMA"


def describe(code, part):
    return f"0x{code[part.start][0]:x}" if part.start < len(code) else "the end"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", help="FILE[:KERNEL regex]")
    parser.add_argument("new", help="FILE[:KERNEL regex]")
    parser.add_argument("--lines", type=int, default=4,
                        help="instructions shown of each side of a region (default 4)")
    args = parser.parse_args()
    tool = cuobjdump()
    picked = []
    for spec in (args.old, args.new):
        path, _, pattern = spec.partition(":")
        text = subprocess.run([tool, "-sass", path], check=True, capture_output=True,
                              text=True).stdout
        picked.append(pick(parse_sass(text), pattern, path))
    (old_name, old), (new_name, new) = picked
    regions = changed_regions(old, new)
    for old_part, new_part in regions:
        print(f"at {describe(old, old_part)} (old, {old_part.stop - old_part.start} instructions)"
              f" -> {describe(new, new_part)} (new, {new_part.stop - new_part.start})")
        for sign, code, part in (("-", old, old_part), ("+", new, new_part)):
            for _, text in code[part][:args.lines]:
                print(f"    {sign} {text}")
    changed = sum(part.stop - part.start for part, _ in regions)
    print(f"{len(old) - changed} of {len(old)} old instructions equal in {len(new)} new; "
          f"{len(regions)} changed regions")
    print(f"old {old_name}: {wgmma_span(old)}")
    print(f"new {new_name}: {wgmma_span(new)}")


if __name__ == "__main__":
    main()
