// The registry's code hashes that need no GPU: the CPU backend's, generated at build time by
// cmake/hash_cpu_code.py.
#include "kernels/registry.h"

#include <gtest/gtest.h>

#include <string>

namespace mlalab::kernels {
namespace {

TEST(CpuBackendCodeHash, IsASha256InHex) {
  const std::string hash(cpu_backend_code_hash());
  EXPECT_EQ(hash.size(), 64u);
  EXPECT_EQ(hash.find_first_not_of("0123456789abcdef"), std::string::npos) << hash;
}

}  // namespace
}  // namespace mlalab::kernels
