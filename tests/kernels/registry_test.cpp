// The registry's code hashes, which need no GPU: the CPU backend's and every variant's, generated
// at build time by cmake/hash_cpu_code.py and cmake/hash_variant_code.py.
#include "kernels/registry.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace mlalab::kernels {
namespace {

bool is_sha256_in_hex(const std::string& text) {
  return text.size() == 64 && text.find_first_not_of("0123456789abcdef") == std::string::npos;
}

TEST(CpuBackendCodeHash, IsASha256InHex) {
  EXPECT_TRUE(is_sha256_in_hex(std::string(cpu_backend_code_hash())));
}

// Both forms of every variant's hash (VariantCodeHashes) are there, and each tells the
// variants apart: no two variants compile to the same code.
TEST(VariantCodeHashes, EveryVariantHasBothFormsAndTheyTellVariantsApart) {
  ASSERT_FALSE(compiled_variants().empty());
  std::set<std::string> hashes;
  std::set<std::string> with_names;
  for (const Variant& variant : compiled_variants()) {
    EXPECT_TRUE(is_sha256_in_hex(variant.code_hash)) << variant.name;
    EXPECT_TRUE(is_sha256_in_hex(variant.code_hash_with_names)) << variant.name;
    EXPECT_NE(variant.code_hash, variant.code_hash_with_names) << variant.name;
    hashes.insert(variant.code_hash);
    with_names.insert(variant.code_hash_with_names);
  }
  EXPECT_EQ(hashes.size(), compiled_variants().size());
  EXPECT_EQ(with_names.size(), compiled_variants().size());
}

}  // namespace
}  // namespace mlalab::kernels
