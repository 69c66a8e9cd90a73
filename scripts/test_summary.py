#!/usr/bin/env python3
"""What each group of tests did, from ctest's (and pytest's) JUnit files: passed, failed and skipped counts,
and why tests skipped, grouped by reason.

ctest's own last line, "100% tests passed, 0 tests failed out of 8", counts a skipped test as
passed: a GPU group that skipped every test would read as a success.

    python3 scripts/test_summary.py gpu=build/test-results/gpu.xml cpu=build/test-results/other.xml
"""
import collections
import sys
import xml.etree.ElementTree as ElementTree

# GoogleTest prints "<file>:<line>: Skipped" and then the GTEST_SKIP() message.
SKIP_MARKER = ": Skipped"


def skip_reason(testcase):
    """The GTEST_SKIP() message, else ctest's own skip message."""
    output = testcase.findtext("system-out") or ""
    lines = output.splitlines()
    for index, line in enumerate(lines):
        if line.endswith(SKIP_MARKER) and index + 1 < len(lines):
            return lines[index + 1].strip()
    skipped = testcase.find("skipped")
    message = skipped.get("message", "") if skipped is not None else ""
    return message or "no reason given"


def summarize(label, path):
    try:
        root = ElementTree.parse(path).getroot()
    except (OSError, ElementTree.ParseError) as error:
        return [f"  {label}: no results ({error})"]
    counts = collections.Counter()
    reasons = collections.Counter()
    failed = []
    for testcase in root.iter("testcase"):
        # ctest marks every case (status run, notrun, fail, ...); pytest only the ones that
        # did not pass (a skipped, failure or error element).
        status = testcase.get("status", "run")
        if status == "notrun" or testcase.find("skipped") is not None:
            counts["skipped"] += 1
            reasons[skip_reason(testcase)] += 1
        elif status != "run" or testcase.find("failure") is not None or \
                testcase.find("error") is not None:
            counts["failed"] += 1
            failed.append(testcase.get("name", "?"))
        else:
            counts["passed"] += 1
    lines = [f"  {label}: {counts['passed']} passed, {counts['failed']} failed, "
             f"{counts['skipped']} skipped"]
    lines += [f"      {count} skipped: {reason}" for reason, count in reasons.most_common()]
    lines += [f"      failed: {name}" for name in failed]
    return lines


def main(arguments):
    if not arguments or any("=" not in argument for argument in arguments):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    print("test summary:")
    for argument in arguments:
        label, path = argument.split("=", 1)
        print("\n".join(summarize(label, path)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
