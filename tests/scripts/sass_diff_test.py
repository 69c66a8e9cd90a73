#!/usr/bin/env python3
"""scripts/sass_diff.py: cuobjdump's SASS parsed, and two kernels' instructions aligned.

    python3 tests/scripts/sass_diff_test.py SCRIPTS_DIR
"""
import sys
import unittest

# Two functions as cuobjdump -sass prints them (abridged: the encoding comments dropped).
SASS = """
	code for sm_90a
		Function : _Z5firstv
	.headerflags	@"EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;
        /*0010*/                   S2R R0, SR_TID.X ;
        /*0020*/                   HGMMA.64x64x16.F32.BF16 R24, gdesc[UR4], R24 ;
        /*0030*/                   EXIT ;
		..........
		Function : _Z6secondv
        /*0000*/                   MOV R2, 0x1 ;
        /*0010*/                   EXIT ;
"""


def code(*texts):
    return [(16 * index, text) for index, text in enumerate(texts)]


class ParseSass(unittest.TestCase):
    def test_each_function_keeps_its_instructions_and_addresses(self):
        functions = sass_diff.parse_sass(SASS)
        self.assertEqual(list(functions), ["_Z5firstv", "_Z6secondv"])
        self.assertEqual(functions["_Z5firstv"][2],
                         (0x20, "HGMMA.64x64x16.F32.BF16 R24, gdesc[UR4], R24"))
        self.assertEqual(functions["_Z6secondv"], [(0, "MOV R2, 0x1"), (0x10, "EXIT")])

    def test_the_wgmma_span_is_found(self):
        first = sass_diff.parse_sass(SASS)["_Z5firstv"]
        self.assertEqual(sass_diff.wgmma_span(first), "1 HGMMA at 0x20-0x20")


class ChangedRegions(unittest.TestCase):
    def test_moved_code_shows_only_the_inserted_instruction(self):
        old = code("MOV R1, R2", "BRA 0x40", "FADD R3, R3, R4", "EXIT")
        new = code("MOV R1, R2", "NOP", "BRA 0x50", "FADD R3, R3, R4", "EXIT")
        self.assertEqual(sass_diff.changed_regions(old, new), [(slice(1, 1), slice(1, 2))])

    def test_a_changed_register_is_a_change(self):
        old = code("MOV R1, R2", "EXIT")
        new = code("MOV R1, R3", "EXIT")
        self.assertEqual(sass_diff.changed_regions(old, new), [(slice(0, 1), slice(0, 1))])

    def test_equal_code_has_no_region(self):
        self.assertEqual(sass_diff.changed_regions(code("EXIT"), code("EXIT")), [])


if __name__ == "__main__":
    sys.path.insert(0, sys.argv.pop(1))
    import sass_diff  # noqa: E402 (the scripts folder comes from the command line)
    unittest.main()
