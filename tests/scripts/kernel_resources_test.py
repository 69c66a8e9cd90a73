#!/usr/bin/env python3
"""scripts/kernel_resources.py: ptxas -v's lines read into registers, stack and spills per
entry function, and the mangled names shortened.

    python3 tests/scripts/kernel_resources_test.py SCRIPTS_DIR
"""
import shutil
import sys
import unittest

# ptxas -v for two entry functions, the first spilling, as nvcc 13 prints it (with a device
# function's properties between, which belong to no entry).
PTXAS = """ptxas info    : 11 bytes gmem
ptxas info    : Compiling entry function '_ZN6mlalab7kernels5wgmma13decode_kernelILi64ELi2ELb1EEEvNS1_9WgmmaArgsE' for 'sm_90a'
ptxas info    : Function properties for _ZN6mlalab7kernels5wgmma13decode_kernelILi64ELi2ELb1EEEvNS1_9WgmmaArgsE
    8 bytes stack frame, 4 bytes spill stores, 32 bytes spill loads
ptxas info    : Used 168 registers, used 16 barriers, 8 bytes cumulative stack size
ptxas info    : Function properties for helper
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function '_ZN6mlalab7kernels5wgmma13decode_kernelILi64ELi2ELb0EEEvNS1_9WgmmaArgsE' for 'sm_90a'
ptxas info    : Function properties for _ZN6mlalab7kernels5wgmma13decode_kernelILi64ELi2ELb0EEEvNS1_9WgmmaArgsE
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 121 registers, used 16 barriers
"""


class ParsePtxas(unittest.TestCase):
    def test_reads_each_entry_function(self):
        kernels = kernel_resources.parse_ptxas(PTXAS)
        self.assertEqual([k["arch"] for k in kernels], ["sm_90a", "sm_90a"])
        self.assertEqual([(k["registers"], k["stack"], k["spill_stores"], k["spill_loads"])
                          for k in kernels], [(168, 8, 4, 32), (121, 0, 0, 0)])
        self.assertTrue(kernels[0]["kernel"].endswith("ILi64ELi2ELb1EEEvNS1_9WgmmaArgsE"))

    def test_lines_outside_an_entry_function_count_for_none(self):
        self.assertEqual(kernel_resources.parse_ptxas(
            "ptxas info    : Function properties for helper\n"
            "    8 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n"), [])

    def test_a_stack_frame_alone_is_local_memory_too(self):
        # An array indexed at run time: ptxas reports no spill, but the frame is local memory,
        # which feasibility refuses as it refuses spills.
        frame_only = {"stack": 512, "spill_stores": 0, "spill_loads": 0}
        self.assertTrue(kernel_resources.uses_local_memory(frame_only))
        kernels = kernel_resources.parse_ptxas(PTXAS)
        self.assertEqual([kernel_resources.uses_local_memory(k) for k in kernels], [True, False])

    @unittest.skipIf(shutil.which("c++filt") is None, "no c++filt here (binutils)")
    def test_names_are_shortened_to_the_template_id(self):
        mangled = [k["kernel"] for k in kernel_resources.parse_ptxas(PTXAS)]
        self.assertEqual(kernel_resources.short_names(mangled),
                         ["decode_kernel<64, 2, true>", "decode_kernel<64, 2, false>"])

    @unittest.skipIf(shutil.which("c++filt") is None, "no c++filt here (binutils)")
    def test_an_enumerator_argument_is_shown_by_its_type_and_value(self):
        mangled = ("_ZN6mlalab7kernels5wgmma21swapped_decode_kernelILi2ELb0ELNS1_13SwappedLaunchE1E"
                   "EEvNS1_9WgmmaArgsE")
        self.assertEqual(kernel_resources.short_names([mangled]),
                         ["swapped_decode_kernel<2, false, SwappedLaunch:1>"])


if __name__ == "__main__":
    sys.path.insert(0, sys.argv.pop(1))
    import kernel_resources  # noqa: E402 (the scripts folder comes from the command line)
    unittest.main()
