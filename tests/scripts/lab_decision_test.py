#!/usr/bin/env python3
"""scripts/lab_decision.py: a landing rule applied to a lab's results.

    python3 tests/scripts/lab_decision_test.py SCRIPTS_DIR
"""
import sys
import unittest


def point(concurrency, change_pct, lower_pct, upper_pct, verdict):
    return {"concurrency": concurrency, "verdict": verdict,
            "change": {"change_pct": change_pct, "lower_pct": lower_pct, "upper_pct": upper_pct}}


def results(*points, partial=False):
    return {"partial": partial, "partial_reason": "interrupted" if partial else None,
            "analysis": {"variants": [{"name": "change", "points": list(points)}]}}


class Decide(unittest.TestCase):
    def test_a_gain_where_asked_and_no_cost_elsewhere_lands(self):
        lines, lands = lab_decision.decide(results(
            point(1, -0.1, -0.2, 0.1, "WITHIN_NOISE"), point(128, 0.4, 0.3, 0.5, "SMALL_CHANGE")),
            gain_at=[128])
        self.assertTrue(lands)
        self.assertEqual(lines[1], "change C128: +0.40 % [+0.30, +0.50] SMALL_CHANGE")

    def test_an_interval_that_reaches_zero_stays_out(self):
        _, lands = lab_decision.decide(results(point(128, 0.4, 0.0, 0.8, "AMBIGUOUS")),
                                       gain_at=[128])
        self.assertFalse(lands)

    def test_a_cost_anywhere_stays_out(self):
        gained = point(32, 2.0, 1.5, 2.5, "FASTER")
        for cost in (point(64, -0.3, -0.4, -0.2, "SMALL_CHANGE"),
                     point(64, -3.0, -3.5, -2.5, "SLOWER")):
            _, lands = lab_decision.decide(results(gained, cost), gain_at=[32])
            self.assertFalse(lands, cost["verdict"])

    def test_a_positive_small_change_elsewhere_is_no_cost(self):
        _, lands = lab_decision.decide(results(point(32, 2.0, 1.5, 2.5, "FASTER"),
                                               point(64, 0.3, 0.2, 0.4, "SMALL_CHANGE")),
                                       gain_at=[32])
        self.assertTrue(lands)

    def test_an_unmeasured_point_stays_out_only_where_a_gain_is_asked(self):
        unmeasured = {"concurrency": 32, "verdict": "WITHHELD", "change": None}
        _, lands = lab_decision.decide(results(unmeasured, point(128, 1, 0.5, 1.5, "FASTER")),
                                       gain_at=[128])
        self.assertTrue(lands)
        _, lands = lab_decision.decide(results(unmeasured), gain_at=[32])
        self.assertFalse(lands)

    def test_a_concurrency_the_lab_did_not_run_cannot_decide(self):
        with self.assertRaises(ValueError):
            lab_decision.decide(results(point(32, 1, 0.5, 1.5, "FASTER")), gain_at=[128])

    def test_a_partial_run_says_so(self):
        lines, _ = lab_decision.decide(results(point(32, 1, 0.5, 1.5, "FASTER"), partial=True),
                                       gain_at=[32])
        self.assertEqual(lines[-1], "partial: interrupted")


if __name__ == "__main__":
    sys.path.insert(0, sys.argv.pop(1))
    import lab_decision  # noqa: E402 (the scripts folder comes from the command line)
    unittest.main()
