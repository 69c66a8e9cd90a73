#include "core/backend.h"

#include <gtest/gtest.h>

namespace mlalab {
namespace {

TEST(Backend, EveryNameReadsBackAsItsBackend) {
  for (const auto& [backend, name] : kBackendNames) {
    EXPECT_EQ(backend_name(backend), name);
    EXPECT_EQ(parse_backend(name), backend);
  }
  EXPECT_EQ(backend_name(Backend::kCuda), "cuda");
  EXPECT_EQ(backend_name(Backend::kCpu), "cpu");
  EXPECT_EQ(backend_name(Backend::kNone), "none");
  EXPECT_EQ(backend_names_text(), "cuda, cpu, none");
}

TEST(Backend, OtherNamesAreNoBackend) {
  EXPECT_EQ(parse_backend("CUDA"), std::nullopt);  // names are lower case, as files write them
  EXPECT_EQ(parse_backend("gpu"), std::nullopt);
  EXPECT_EQ(parse_backend(""), std::nullopt);
}

}  // namespace
}  // namespace mlalab
