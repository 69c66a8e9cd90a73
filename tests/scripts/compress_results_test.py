#!/usr/bin/env python3
"""scripts/compress_results.sh, and the rule it keeps: the tracked tree leaves room for a
device call (which carries all of it, at most 64 MiB, beside the packed builds).

    python3 tests/scripts/compress_results_test.py REPO_ROOT
"""
import lzma
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

# A device call carries the tracked tree and the packed builds (a landing: one stripped full
# build with the GPU tests, ~9 MiB; version 68's lab call: four small ones, ~14 MiB): 64 MiB in
# all, as the device counts it: every file in whole 4 KiB blocks (it refused 36.7 MiB of tracked
# bytes, 47.5 MiB of blocks, beside 24 MiB of builds).
ROOM_FOR_BUILDS_MIB = 14
DEVICE_CALL_LIMIT_MIB = 64
BLOCK_BYTES = 4096


def tracked_files():
    listed = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True)
    if listed.returncode != 0:
        return None
    return [ROOT / name for name in listed.stdout.decode().split("\0") if name]


def named_by_a_test(relative):
    return subprocess.run(["grep", "-rqF", relative, "tests", "python/tests"],
                          cwd=ROOT).returncode == 0


class CommittedResults(unittest.TestCase):
    def setUp(self):
        self.files = tracked_files()
        if self.files is None:
            self.skipTest("not a git checkout: what is tracked is unknown")

    def test_lab_records_are_compressed_unless_a_test_reads_them(self):
        plain = [f.relative_to(ROOT).as_posix() for f in self.files
                 if f.name == "results.json" and f.parts[len(ROOT.parts)] == "docs"]
        unread = [p for p in plain if not named_by_a_test(p)]
        self.assertEqual(unread, [], "run `bash scripts/compress_results.sh` before committing")

    def test_the_tracked_tree_leaves_room_for_a_device_call(self):
        blocks = sum(-(-f.stat().st_size // BLOCK_BYTES) for f in self.files if f.is_file())
        self.assertLess(blocks * BLOCK_BYTES / 2**20, DEVICE_CALL_LIMIT_MIB - ROOM_FOR_BUILDS_MIB,
                        "the tracked tree is too large for a device call with its builds: "
                        "compress or prune docs/results")


class Script(unittest.TestCase):
    def test_compresses_a_record_and_it_decompresses_to_the_same_bytes(self):
        with tempfile.TemporaryDirectory() as folder:
            run = Path(folder) / "2026-01-01-x" / "ab" / "run-1"
            run.mkdir(parents=True)
            record = b'{"schema": "mlalab.ab.results/3", "samples": [' + b"1, " * 5000 + b"1]}"
            (run / "results.json").write_bytes(record)
            (run / "report.md").write_text("# a report\n")
            done = subprocess.run(["bash", str(ROOT / "scripts/compress_results.sh"), folder],
                                  capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertIn("1 results.json", done.stdout)
            self.assertFalse((run / "results.json").exists())
            self.assertEqual(lzma.open(run / "results.json.xz").read(), record)
            self.assertEqual((run / "report.md").read_text(), "# a report\n")

    def test_compresses_large_logs_and_timelines_and_leaves_small_ones(self):
        with tempfile.TemporaryDirectory() as folder:
            run = Path(folder) / "2026-01-01-x"
            run.mkdir()
            hazards = b"========= Race reported between ...\n" * 4000  # ~150 KB
            (run / "racecheck.log").write_bytes(hazards)
            (run / "timeline.json").write_bytes(b'{"ctas": [' + b"0, " * 30000 + b"0]}")
            (run / "info.log").write_text("NVIDIA H200\n")
            (run / "fingerprint.json").write_bytes(b'{"pad": "' + b"x" * 70000 + b'"}')
            done = subprocess.run(["bash", str(ROOT / "scripts/compress_results.sh"), folder],
                                  capture_output=True, text=True)
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertIn("2 other records over 64 KiB", done.stdout)
            self.assertEqual(lzma.open(run / "racecheck.log.xz").read(), hazards)
            self.assertTrue((run / "timeline.json.xz").exists())
            self.assertEqual((run / "info.log").read_text(), "NVIDIA H200\n")
            self.assertTrue((run / "fingerprint.json").exists())


if __name__ == "__main__":
    ROOT = Path(sys.argv.pop(1)).resolve()
    os.chdir(ROOT)
    unittest.main()
