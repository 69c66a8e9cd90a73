#!/usr/bin/env python3
"""scripts/test_summary.py: counts by status, and skip reasons grouped, from ctest's and
pytest's JUnit.

    python3 tests/scripts/test_summary_test.py SCRIPTS_DIR
"""
import os
import sys
import tempfile
import unittest

# ctest's JUnit for a group: two tests skipped by GTEST_SKIP() for one reason, one passed, one
# failed (the shape ctest 3.25 writes).
JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="(empty)" tests="4" failures="1" disabled="0" skipped="2">
  <testcase name="A.Skips" status="notrun">
    <skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>
    <system-out>[ RUN      ] A.Skips
/src/a_test.cpp:7: Skipped
no NVIDIA driver/GPU found
[  SKIPPED ] A.Skips (0 ms)
</system-out>
  </testcase>
  <testcase name="A.SkipsToo" status="notrun">
    <skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>
    <system-out>/src/a_test.cpp:9: Skipped
no NVIDIA driver/GPU found
</system-out>
  </testcase>
  <testcase name="B.Passes" status="run"><system-out>[       OK ] B.Passes</system-out></testcase>
  <testcase name="C.Fails" status="fail"><failure message="Failed"/></testcase>
</testsuite>
"""


# pytest's JUnit for the Python group: no status attribute; a passed case has no child.
PYTEST_JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest" errors="1" failures="1" skipped="2" tests="5">
  <testcase classname="test_cpu" name="test_passes" time="0.1"/>
  <testcase classname="test_cuda" name="test_a" time="0"><skipped type="pytest.skip"
    message="no CUDA device">skip</skipped></testcase>
  <testcase classname="test_cuda" name="test_b" time="0"><skipped type="pytest.skip"
    message="no CUDA device">skip</skipped></testcase>
  <testcase classname="test_cpu" name="test_fails" time="0"><failure message="assert 1 == 2"/></testcase>
  <testcase classname="test_cpu" name="test_errors" time="0"><error message="fixture"/></testcase>
</testsuite></testsuites>
"""


def summarize_text(label, text):
    with tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False) as junit:
        junit.write(text)
    try:
        return test_summary.summarize(label, junit.name)
    finally:
        os.unlink(junit.name)


class Summary(unittest.TestCase):
    def test_counts_each_status_and_groups_the_skip_reasons(self):
        lines = summarize_text("gpu", JUNIT)
        self.assertEqual(lines, ["  gpu: 1 passed, 1 failed, 2 skipped",
                                 "      2 skipped: no NVIDIA driver/GPU found",
                                 "      failed: C.Fails"])

    def test_reads_pytest_junit_too(self):
        lines = summarize_text("python", PYTEST_JUNIT)
        self.assertEqual(lines, ["  python: 1 passed, 2 failed, 2 skipped",
                                 "      2 skipped: no CUDA device",
                                 "      failed: test_fails", "      failed: test_errors"])

    def test_a_missing_file_is_said_not_counted_as_a_pass(self):
        lines = test_summary.summarize("cpu", "/nonexistent/other.xml")
        self.assertEqual(len(lines), 1)
        self.assertIn("cpu: no results", lines[0])


if __name__ == "__main__":
    sys.path.insert(0, sys.argv.pop(1))
    import test_summary  # noqa: E402 (the scripts folder comes from the command line)
    unittest.main()
