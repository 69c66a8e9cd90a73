#!/usr/bin/env python3
"""cmake/hash_variant_code.py: the names it hashes do not depend on the build folder, and the
code hash proper does not depend on the kernels' names at all.

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


SPLIT = b"_ZN6mlalab7kernels5wgmma14swapped_kernelILi64ELi2EEEvNS0_10DecodeArgsE"
BALANCED = b"_ZN6mlalab7kernels5wgmma23swapped_balanced_kernelILi64ELi2EEEvNS0_10DecodeArgsE"


def cubin(names_and_code):
    """A cubin's hashed sections as hashed_sections_of_cubins gives them."""
    sections = []
    for name, text, info in names_and_code:
        sections += [(b".text." + name, text), (b".nv.info." + name, info)]
    return sections


def renamed(name):
    """The name a template argument added beside the others would give the kernel."""
    return name.replace(b"ILi64ELi2EEE", b"ILi64ELi2ELb0EEE")


class CodeHashWithoutNames(unittest.TestCase):
    def setUp(self):
        self.kernels = [(SPLIT, b"\x01" * 32, b"\x04\x2f"), (BALANCED, b"\x02" * 32, b"\x04\x30")]

    def hashes(self, kernels):
        cubins = [cubin(kernels)]
        return (sha256_of_sections(hash_variant_code.name_free_chunks(cubins)),
                sha256_of_sections(hash_variant_code.chunks_with_names(cubins)))

    def test_a_rename_keeps_the_code_hash_and_changes_the_hash_with_names(self):
        code, with_names = self.hashes(self.kernels)
        renamed_code, renamed_with_names = self.hashes(
            [(renamed(name), text, info) for name, text, info in self.kernels])
        self.assertEqual(code, renamed_code)
        self.assertNotEqual(with_names, renamed_with_names)

    def test_the_order_of_the_sections_does_not_matter(self):
        self.assertEqual(self.hashes(self.kernels), self.hashes(self.kernels[::-1]))

    def test_any_changed_byte_changes_both(self):
        code, with_names = self.hashes(self.kernels)
        for changed in ([(SPLIT, b"\x01" * 31 + b"\x03", b"\x04\x2f"), self.kernels[1]],
                        [(SPLIT, b"\x01" * 32, b"\x04\x2e"), self.kernels[1]]):
            changed_code, changed_with_names = self.hashes(changed)
            self.assertNotEqual(code, changed_code)
            self.assertNotEqual(with_names, changed_with_names)

    def test_a_kernels_text_stays_paired_with_its_attributes(self):
        # The same sections' bytes, with the two kernels' attributes exchanged: other code.
        exchanged = [(SPLIT, b"\x01" * 32, b"\x04\x30"), (BALANCED, b"\x02" * 32, b"\x04\x2f")]
        self.assertNotEqual(self.hashes(self.kernels)[0], self.hashes(exchanged)[0])


if __name__ == "__main__":
    sys.path.insert(0, sys.argv.pop(1))
    import hash_variant_code  # noqa: E402 (the cmake folder comes from the command line)
    from code_hash import sha256_of_sections  # noqa: E402
    unittest.main()
