#!/usr/bin/env python3
"""scripts/ncu_stall_lines.py: Nsight Compute's source page read into samples and stall reasons
per CUDA line, and the summary's shares.

    python3 tests/scripts/ncu_stall_lines_test.py SCRIPTS_DIR
"""
import os
import sys
import tempfile
import unittest

# The shape of `ncu --page source --csv --print-source cuda,sass` (columns cut to those read):
# a section per file, CUDA lines with their SASS rows under them (no line number), "-" where
# the report holds no source text.
PAGE = '''"File Path","/build/host/checkout/src/kernels/wgmma/tile_copies.cuh"
"Function Name","decode_kernel"
"Line No","Source","Address","Source","Warp Stall Sampling (All Samples)","stall_long_sb","stall_wait","stall_long_sb (Not Issued)"
"150","-","-","-","30","27","3","27"
"","","0x10","SYNCS.PHASECHK","30","27","3","27"
"238","-","-","-","10","10","0","10"
"File Path","/build/host/checkout/src/kernels/wgmma/primitives.cuh"
"Line No","Source","Address","Source","Warp Stall Sampling (All Samples)","stall_long_sb","stall_wait","stall_long_sb (Not Issued)"
"53","wgmma wait","-","-","60","0","60","0"
'''


class ReadLines(unittest.TestCase):
    def test_each_cuda_line_with_its_file_and_reasons(self):
        lines = ncu_stall_lines.read_lines(PAGE)
        self.assertEqual([(l["file"].split("/")[-1], l["line"], l["samples"]) for l in lines],
                         [("tile_copies.cuh", 150, 30), ("tile_copies.cuh", 238, 10),
                          ("primitives.cuh", 53, 60)])
        # "Not Issued" columns are a subset of the samples, not more reasons.
        self.assertEqual(lines[0]["reasons"], {"long_sb": 27, "wait": 3})

    def test_summary_shares_and_order(self):
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "src/kernels/wgmma"))
            with open(os.path.join(root, "src/kernels/wgmma/tile_copies.cuh"), "w") as source:
                source.write("\n" * 149 + "wait_first_landed();\n")
            text = ncu_stall_lines.summary(ncu_stall_lines.read_lines(PAGE), 2, root)
        rows = text.splitlines()
        self.assertEqual(rows[0], "100 warp state samples over 3 source lines")
        self.assertEqual(rows[1], "by reason: wait 63.0%, long_sb 37.0%")
        self.assertTrue(rows[3].startswith(" 60.0%  primitives.cuh:53"), rows[3])
        self.assertIn("wait 60.0%", rows[3])
        self.assertTrue(rows[3].endswith("wgmma wait"), rows[3])
        # No text in the report: the checkout's line stands in.
        self.assertTrue(rows[4].startswith(" 30.0%  tile_copies.cuh:150"), rows[4])
        self.assertTrue(rows[4].endswith("wait_first_landed();"), rows[4])
        self.assertEqual(len(rows), 5)  # --top 2


if __name__ == "__main__":
    sys.path.insert(0, sys.argv.pop(1))
    import ncu_stall_lines  # noqa: E402
    unittest.main()
