#!/usr/bin/env python3
"""Runs the README's shell lines as a user would, so that every command it shows works as
written.

Every line of every ```bash block of README.md runs, in order, through bash in a copy of the
repository (its tracked and unignored files), with the copy's build/bin on PATH so that the
lines that say `mlalab` find the binary the README's first command built. A line runs unless:
  - its comment starts with "GPU:" and this machine has no GPU (it needs one);
  - it is `bash scripts/test.sh`, the command this test is part of.
A line passes when it exits 0; `mlalab ab` may also exit 1, a variant REJECTED, which is a
result. The kernel selection comes from MLALAB_VARIANTS / MLALAB_CUDA_ARCHS when set (the test
command sets the CI selection), so that a line that builds does not build every variant.

    python3 tests/docs/readme_commands_test.py REPO_ROOT
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

FENCED_BASH = re.compile(r"^```bash\n(.*?)^```", re.MULTILINE | re.DOTALL)
# A comment after a command: at least two spaces, then "# ".
TRAILING_COMMENT = re.compile(r"\s{2,}#\s?(.*)$")
GPU_MARK = "GPU:"
THE_TEST_COMMAND = "bash scripts/test.sh"
# mlalab ab exits 1 when a variant is REJECTED: an answer, not a failure.
AB_RESULT_STATUSES = (0, 1)
LINE_TIMEOUT_S = 20 * 60


def readme_lines(readme_text):
    """(command, comment) for every line of every ```bash block, in order."""
    lines = []
    for block in FENCED_BASH.findall(readme_text):
        for raw in block.splitlines():
            if not raw.strip() or raw.lstrip().startswith("#"):
                continue
            match = TRAILING_COMMENT.search(raw)
            command = raw[:match.start()] if match else raw
            comment = match.group(1).strip() if match else ""
            lines.append((command.strip(), comment))
    return lines


def has_gpu():
    try:
        return subprocess.run(["nvidia-smi", "-L"], capture_output=True).returncode == 0
    except OSError:
        return False


def copy_repository(root, destination):
    """The files a fresh clone would have, plus uncommitted ones not ignored by git."""
    listed = subprocess.run(
        ["git", "-C", root, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True, check=True).stdout.decode()
    for relative in filter(None, listed.split("\0")):
        source = os.path.join(root, relative)
        if not os.path.isfile(source):
            continue  # deleted in the working tree but still in the index
        target = os.path.join(destination, relative)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copy2(source, target)


def allowed_statuses(command):
    return AB_RESULT_STATUSES if re.search(r"\bmlalab ab\b", command) else (0,)


def main(root):
    with open(os.path.join(root, "README.md"), encoding="utf-8") as readme:
        lines = readme_lines(readme.read())
    if not lines:
        print("README.md has no ```bash block: nothing to run")
        return 1
    gpu = has_gpu()
    failures = []
    with tempfile.TemporaryDirectory(prefix="mlalab-readme-") as copy:
        copy_repository(root, copy)
        environment = dict(os.environ)
        environment["PATH"] = os.path.join(copy, "build", "bin") + os.pathsep + environment["PATH"]
        for command, comment in lines:
            if command == THE_TEST_COMMAND:
                print(f"skip  {command}: the test command itself, which runs this test")
                continue
            if comment.startswith(GPU_MARK) and not gpu:
                print(f"skip  {command}: needs a GPU ({comment[len(GPU_MARK):].strip()})")
                continue
            start = time.monotonic()
            try:
                result = subprocess.run(["bash", "-c", command], cwd=copy, env=environment,
                                        stdin=subprocess.DEVNULL, capture_output=True,
                                        text=True, timeout=LINE_TIMEOUT_S)
                status, output = result.returncode, result.stdout + result.stderr
            except subprocess.TimeoutExpired as timeout:
                status, output = None, f"timed out after {timeout.timeout} s"
            seconds = time.monotonic() - start
            ok = status in allowed_statuses(command)
            print(f"{'ok  ' if ok else 'FAIL'}  {command}: exit {status}, {seconds:.0f} s")
            if not ok:
                failures.append(command)
                print("      " + "\n      ".join(output.strip().splitlines()[-15:]))
    if failures:
        print(f"{len(failures)} README line(s) failed: " + "; ".join(failures))
        return 1
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
