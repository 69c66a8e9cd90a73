#!/usr/bin/env python3
"""scripts/gpu_session.sh under a stop time (MLALAB_STOP_AT): a step due after it is skipped
and listed, a step running at it is stopped and keeps what it measured, and the archive (in
MLALAB_ARCHIVE_DIR when set) holds every stage that ran. On the CPU backend, with this build's
mlalab.

    python3 tests/scripts/gpu_session_test.py SCRIPTS_DIR BUILD_DIR
"""
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import unittest

# A CPU lab that runs far longer than the stop time it is given: 400 rounds at each of 4 points.
LONG_LAB = """
name = "long-cpu-lab"
hypothesis = "2 threads beat 1"
backend = "cpu"
[sweep]
layout = "v4"
heads = 16
page_size = 64
concurrency = [1, 2, 4, 8]
context = 2048
[measure]
launches_per_sample = 5
max_minutes = 5
throttle_fraction = 0
[decision]
min_effect_pct = 5.0
min_rounds = 400
max_rounds = 400
time_budget_s = 120
seed = 1
[baseline]
variant = "cpu"
threads = 2
[[variant]]
name = "1 thread"
variant = "cpu"
threads = 1
"""


def run_session(out, stop_at, stages, experiments="", archive_dir=None):
    env = dict(os.environ, MLALAB_STOP_AT=str(stop_at), MLALAB_AB_EXPERIMENTS=experiments)
    if archive_dir:
        env["MLALAB_ARCHIVE_DIR"] = str(archive_dir)
    return subprocess.run(["bash", str(SCRIPTS / "gpu_session.sh"), str(BUILD), str(out), *stages],
                          env=env, capture_output=True, text=True, timeout=300)


def archived(out, archive_dir=None):
    path = pathlib.Path(archive_dir or out.parent) / f"{out.name}.tar.gz"
    with tarfile.open(path) as archive:
        return archive.getnames()


class StopTime(unittest.TestCase):
    def setUp(self):
        self.folder = pathlib.Path(tempfile.mkdtemp(prefix="gpu_session_test."))
        self.addCleanup(shutil.rmtree, self.folder)

    def test_steps_after_the_stop_time_are_skipped_and_listed(self):
        out = self.folder / "work" / "session"
        returned = self.folder / "returned"  # the device tool's $OUT: the archive alone
        result = run_session(out, int(time.time()) - 1, ["configs"], archive_dir=returned)
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertEqual((out / "skipped.txt").read_text().split(), ["configs", "configs_sm120"])
        self.assertFalse((out / "configs.log").exists())
        self.assertIn("session/skipped.txt", archived(out, returned))
        self.assertEqual(sorted(p.name for p in returned.iterdir()), ["session.tar.gz"])

    def test_a_lab_running_at_the_stop_time_keeps_what_it_measured(self):
        out = self.folder / "session"
        experiment = self.folder / "long-cpu-lab.toml"
        experiment.write_text(LONG_LAB)
        started = time.time()
        result = run_session(out, int(started) + 4, ["ab"], str(experiment))
        self.assertLess(time.time() - started, 60, "the lab was not stopped at the stop time")
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        # Its verify step came after the stop time.
        self.assertEqual((out / "skipped.txt").read_text().split(), ["verify_long-cpu-lab"])
        records = list((out / "ab").glob("long-cpu-lab-*/results.json"))
        self.assertEqual(len(records), 1, result.stdout)
        record = json.loads(records[0].read_text())
        # Stopped by the signal and written then, not a checkpoint's "in progress" record.
        self.assertTrue(record["partial"])
        self.assertIn("SIGTERM", record["partial_reason"])
        names = archived(out)
        self.assertIn(f"session/ab/{records[0].parent.name}/results.json", names)
        self.assertIn("session/ab_long-cpu-lab.log", names)


if __name__ == "__main__":
    SCRIPTS = pathlib.Path(sys.argv.pop(1))
    BUILD = pathlib.Path(sys.argv.pop(1))
    unittest.main()
