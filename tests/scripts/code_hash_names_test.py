#!/usr/bin/env python3
"""cmake/hash_variant_code.py: the names it hashes do not depend on the build folder.

    python3 tests/scripts/code_hash_names_test.py CMAKE_DIR
"""
import sys
import unittest

# The combine kernel's text section as nvcc named it in two build folders of the same source.
IN_BUILD = b".text._ZN6mlalab7kernels43_GLOBAL__N__8c90529c_10_combine_cu_ec9682f114combine_kernelILi1EEEv"
IN_PACKAGE = b".text._ZN6mlalab7kernels43_GLOBAL__N__e95de537_10_combine_cu_ec9682f114combine_kernelILi1EEEv"


class StableNames(unittest.TestCase):
    def test_anonymous_namespaces_hash_alike_from_any_build_folder(self):
        self.assertEqual(hash_variant_code.stable_name(IN_BUILD),
                         hash_variant_code.stable_name(IN_PACKAGE))

    def test_other_names_are_kept(self):
        name = b".text._ZN6mlalab7kernels5wgmma13decode_kernelILi64ELi2ELb0EEEvNS0_10DecodeArgsE"
        self.assertEqual(hash_variant_code.stable_name(name), name)
        self.assertNotEqual(hash_variant_code.stable_name(IN_BUILD),
                            hash_variant_code.stable_name(IN_BUILD.replace(b"Li1E", b"Li4E")))


if __name__ == "__main__":
    sys.path.insert(0, sys.argv.pop(1))
    import hash_variant_code  # noqa: E402 (the cmake folder comes from the command line)
    unittest.main()
