#!/usr/bin/env python3
"""What ptxas gives each decode kernel of a build (registers, stack, spill stores and loads),
without a GPU: every kernel instantiation of BUILD_DIR is compiled again with its own line
from BUILD_DIR/compile_commands.json plus `-Xptxas -v`, into a scratch object.

    python3 scripts/kernel_resources.py BUILD_DIR [REGEX]

REGEX picks variants by name (default: every one the build compiles). The source tree is
compiled as it is now, whatever the build last saw, so a change's spills show before any
build. Exit status 1 when a kernel uses local memory, by spills or by a stack frame (an array
indexed at run time: ptxas reports no spill for it, but the loaded code's local size, which
feasibility reads, counts it as well; in session 50 an array of O indexed by the cluster rank
put 512 B there): such a balanced kernel is refused balanced launches, such a split kernel the
variant (src/dispatch/feasibility.cpp); on a GPU, `mlalab configs` reads the same from the
loaded code. Two of session 31's changes spilled 4 B
here before they ever ran (docs/perf-notes.md, versions 47 and 48). Exit status 3 when no
variant of the build matches (the test KernelsDoNotSpill counts that a skip), 2 on bad usage.
(ptxas's -Werror does not make its spill warning an error: a build flag cannot catch it.)
"""
import concurrent.futures
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

ENTRY = re.compile(r"Compiling entry function '(\S+)' for '(\w+)'")
FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
USED = re.compile(r"Used (\d+) registers")
SHORT = re.compile(r"(\w+<[^()]*>)\(")
# An enumerator as a template argument demangles as a cast, (ns::Kind)1: shown as Kind:1.
ENUM_ARGUMENT = re.compile(r"\((?:\w+::)*(\w+)\)(-?\d+)")


def parse_ptxas(text):
    """The entry functions of ptxas -v output: [{kernel, arch, registers, stack, spill_stores,
    spill_loads}], in order (the mangled kernel name)."""
    kernels, current = [], None
    for line in text.splitlines():
        if entry := ENTRY.search(line):
            current = {"kernel": entry.group(1), "arch": entry.group(2), "registers": None,
                       "stack": 0, "spill_stores": 0, "spill_loads": 0}
            kernels.append(current)
        elif current is not None and (frame := FRAME.search(line)):
            current["stack"], current["spill_stores"], current["spill_loads"] = map(
                int, frame.groups())
        elif current is not None and (used := USED.search(line)):
            current["registers"] = int(used.group(1))
            current = None  # the entry's last line
    return kernels


def uses_local_memory(kernel):
    """Whether a parse_ptxas entry puts anything in local memory: spills, or a stack frame."""
    return kernel["stack"] + kernel["spill_stores"] + kernel["spill_loads"] > 0


def short_names(mangled):
    """Each mangled name as its template-id, e.g. decode_kernel<64, 2, true> (c++filt's
    demangling; the mangled name where there is no c++filt)."""
    try:
        demangled = subprocess.run(["c++filt"], input="\n".join(mangled), capture_output=True,
                                   text=True, check=True).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return list(mangled)
    readable = [ENUM_ARGUMENT.sub(r"\1:\2", name) for name in demangled]
    return [(m.group(1) if (m := SHORT.search(name)) else name) for name in readable]


def instantiations(build_dir, pattern):
    """(variant, compile command, directory) of each generated kernel instantiation."""
    with open(os.path.join(build_dir, "compile_commands.json")) as file:
        commands = json.load(file)
    found = []
    for entry in commands:
        source = entry["file"]
        if os.sep + "instantiations" + os.sep not in source:
            continue
        variant = os.path.splitext(os.path.basename(source))[0]
        if re.search(pattern, variant):
            found.append((variant, entry["command"], entry["directory"]))
    return sorted(found)


def ptxas_report(command, directory):
    """ptxas -v's output for one compile line, its object written to a scratch file."""
    words, kept, skip = shlex.split(command), [], False
    for word in words:
        if skip:
            skip = False
        elif word in ("-o", "-MF", "-MT"):
            skip = True
        elif not word.startswith("-MD"):
            kept.append(word)
    with tempfile.TemporaryDirectory() as scratch:
        result = subprocess.run(kept + ["-Xptxas", "-v", "-o", os.path.join(scratch, "k.o")],
                                capture_output=True, text=True, cwd=directory)
    if result.returncode != 0:
        raise RuntimeError(result.stderr[-2000:])
    return result.stderr


def main(argv):
    if len(argv) not in (2, 3) or argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        return 2
    build_dir, pattern = argv[1], argv[2] if len(argv) == 3 else ""
    found = instantiations(build_dir, pattern)
    if not found:
        print(f"kernel_resources: no kernel instantiation of {build_dir} matches '{pattern}'",
              file=sys.stderr)
        return 3
    print(f"kernel_resources: compiling {len(found)} instantiations of {build_dir} with "
          "-Xptxas -v", file=sys.stderr)
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count() or 1) as pool:
        reports = list(pool.map(lambda item: ptxas_report(item[1], item[2]), found))
    rows = []
    for (variant, _, _), report in zip(found, reports):
        kernels = parse_ptxas(report)
        for kernel, name in zip(kernels, short_names([k["kernel"] for k in kernels])):
            rows.append((variant, name, kernel))
    print(f"{'variant':<24} {'kernel':<36} {'arch':<7} {'regs':>4} {'stack':>5} "
          f"{'spill st':>8} {'spill ld':>8}")
    spilled = 0
    for variant, name, k in rows:
        spilled += uses_local_memory(k)
        print(f"{variant:<24} {name:<36} {k['arch']:<7} {k['registers'] or 0:>4} "
              f"{k['stack']:>5} {k['spill_stores']:>8} {k['spill_loads']:>8}")
    if spilled:
        print(f"kernel_resources: {spilled} kernel(s) use local memory (a stack frame or spills)",
              file=sys.stderr)
    return 1 if spilled else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
