#!/usr/bin/env python3
"""bench/targets/hopper_targets.py: which bench rows answer each of issue 12's targets, and
the verdicts, from bench JSON written here (no GPU).

    python3 tests/scripts/hopper_targets_test.py TARGETS_DIR
"""
import json
import pathlib
import sys
import tempfile
import unittest


def row(variant, heads, batch, context, us, *, layout="v3", page=64, gbps=0.0, tflops=0.0,
        tokens=None, splits=1, workers=None):
    return {"variant": variant, "heads": heads, "batch": batch, "context": context, "us": us,
            "layout": layout, "page_size": page, "gbps": gbps, "tflops": tflops,
            "tokens": tokens if tokens is not None else batch * context, "splits": splits,
            "workers": workers}


def write(folder, name, rows, lengths="equal", read=4500.0, commit="abc123"):
    document = {"environment": {"read_gbps": read, "commit": commit}, "lengths": lengths,
                "rows": rows}
    (folder / f"{name}.json").write_text(json.dumps(document))


def by_target(results):
    return {result["target"]: result for result in results}


class Judge(unittest.TestCase):
    def setUp(self):
        self.folder = pathlib.Path(tempfile.mkdtemp())

    def judged(self):
        rows, reads, commits = hopper_targets.load_rows(self.folder)
        return by_target(hopper_targets.judge(rows)), reads, commits

    def test_the_fastest_variant_answers_and_the_threshold_decides(self):
        write(self.folder, "h16_v3", [
            row("h16_t16_w4_s2", 16, 64, 4096, 95.0, gbps=3500.0),
            row("wgmma_h64_t32_w8_s4", 16, 64, 4096, 80.0, gbps=4000.0),   # ≥ 3.95: met
            row("wgmma_h64_t32_w8_s4", 16, 128, 4096, 150.0, gbps=4100.0),  # < 4.2: missed
            row("h16_t16_w4_s2", 16, 1, 4096, 9.5, splits=64),              # ≤ 10 µs: met
        ])
        results, reads, commits = self.judged()
        b64 = results["H = 16, L = 4,096, B = 64: ≥ 3.95 TB/s"]
        self.assertEqual(b64["status"], "met")
        self.assertEqual(b64["variant"], "wgmma_h64_t32_w8_s4, 1 split")
        self.assertEqual(results["H = 16, L = 4,096, B = 128: ≥ 4.2 TB/s"]["status"], "missed")
        self.assertEqual(results["H = 16, L = 4,096, B = 1: ≤ 10 µs"]["variant"],
                         "h16_t16_w4_s2, 64 splits")
        self.assertEqual(results["H = 16, L = 4,096, B = 32: ≥ 3.6 TB/s"]["status"],
                         "not measured")
        self.assertEqual((reads, commits), ([4500.0], {"abc123"}))

    def test_ratios_against_the_same_shape(self):
        write(self.folder, "h128_v3", [row("wgmma_h64_t32_w8_s4", 128, 64, 4096, 140.0,
                                           tflops=530.0)])
        write(self.folder, "h128_v4", [row("wgmma_h64_t32_w8_s4", 128, 64, 4096, 150.0,
                                           layout="v4", tflops=500.0)])
        # Page 1 compares the wgmma family only: the portable row at page 64 is ignored.
        write(self.folder, "page1_h128", [row("wgmma_h64_t32_w8_s4", 128, 64, 4096, 160.0,
                                              page=1)])                   # +14.3 %: met
        write(self.folder, "extra", [row("h64_t32_w8_s2", 128, 64, 4096, 100.0, tflops=742.0)])
        results, _, _ = self.judged()
        # V4 against the fastest V3 row of the shape, whatever its family: 500 / 742.
        v4 = results["V4 at V3's rate (≥ 95%), H = 128, B = 64"]
        self.assertEqual(v4["status"], "missed")
        self.assertIn("500 against 742 TFLOP/s (67.4%)", v4["measured"])
        page1 = results["page 1 within 15% of page 64 (wgmma), H = 128, B = 64"]
        self.assertEqual(page1["status"], "met")
        self.assertIn("160.0 against 140.0 µs", page1["measured"])
        # The portable row is the fastest at page 64, so it answers the TFLOP/s target.
        self.assertEqual(results["H = 128, L = 4,096, B = 64: ≥ 650 TFLOP/s"]["variant"],
                         "h64_t32_w8_s2, 1 split")

    def test_mixed_lengths_per_token_against_equal_ones_of_the_mean_length(self):
        write(self.folder, "equal_mean_h16", [row("wgmma_h64_t32_w8_s4", 16, 64, 4608, 90.0)])
        write(self.folder, "mixed_balanced_h16",
              [row("wgmma_h64_t32_w8_s4", 16, 64, 8192, 100.0, tokens=280000, workers=132)],
              lengths="uniform:0.125")
        write(self.folder, "mixed_heuristic_h16",
              [row("wgmma_h64_t32_w8_s4", 16, 64, 8192, 120.0, tokens=280000)],
              lengths="uniform:0.125")
        results, _, _ = self.judged()
        mixed = results[
            "mixed lengths (1,024-8,192) within 10% of equal per token, H = 16, B = 64"]
        # 100 µs / 280,000 tokens against 90 µs / 294,912: +17.0 %, the balanced row.
        self.assertEqual(mixed["status"], "missed")
        self.assertEqual(mixed["variant"], "wgmma_h64_t32_w8_s4, balanced:132")
        self.assertIn("+17.0%", mixed["measured"])

    def test_an_unreadable_file_and_the_tables_own_json_are_skipped(self):
        (self.folder / "broken.json").write_text("{")
        own_table = {"rows": [row("x", 16, 1, 4096, 1.0)]}
        (self.folder / "targets.json").write_text(json.dumps(own_table))
        results, reads, _ = self.judged()
        self.assertTrue(all(result["status"] == "not measured" for result in results.values()))
        self.assertEqual(reads, [])
        table = hopper_targets.markdown(list(results.values()), reads, set())
        self.assertIn("0 of 17 met; 17 not measured.", table)

    def test_the_peer_table_by_the_best_peer_of_each_shape(self):
        def shape(mlalab_us, **peer_us):
            return {"results": {"mlalab": {"us": mlalab_us},
                                **{name: {"us": us} for name, us in peer_us.items()}}}
        path = self.folder / "peers.json"
        path.write_text(json.dumps({"rows": [
            shape(10.0, flashinfer=13.0, other=12.0),   # best peer 12: 1.2
            shape(10.0, flashinfer=12.0),               # 1.2
            shape(10.0, flashinfer=None),               # no peer time: left out
        ]}))
        ratios = hopper_targets.peer_ratios(path)
        self.assertEqual(ratios, [1.2, 1.2])
        # The peer table's own rows are not bench rows.
        rows, _, _ = hopper_targets.load_rows(self.folder)
        self.assertEqual(rows, [])
        target = "peer table: geometric mean ≥ 1.1×, no shape below 0.95×"
        self.assertEqual(by_target(hopper_targets.judge([], ratios))[target]["status"], "met")
        # A mean above 1.1 with one shape below 0.95 misses.
        missed = by_target(hopper_targets.judge([], [1.5, 1.5, 0.9]))[target]
        self.assertEqual(missed["status"], "missed")
        self.assertIn("lowest 0.90×", missed["measured"])
        self.assertIsNone(hopper_targets.peer_ratios(self.folder / "none.json"))


if __name__ == "__main__":
    sys.path.insert(0, sys.argv.pop(1))
    import hopper_targets  # noqa: E402 (the folder comes from the command line)
    unittest.main()
