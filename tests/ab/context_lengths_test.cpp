#include "ab/context_lengths.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace mlalab::ab {
namespace {

TEST(ContextLengths, FixedGivesOneLength) {
  EXPECT_EQ(sample_context_lengths(ContextSpec{.length = 77}, 3), (std::vector<int>{77, 77, 77}));
  EXPECT_TRUE(sample_context_lengths(ContextSpec{}, 0).empty());
}

TEST(ContextLengths, UniformStaysInRangeAndCoversIt) {
  const ContextSpec spec{.kind = ContextSpec::Kind::kUniform, .min_length = 10,
                         .max_length = 13, .seed = 7};
  const auto lengths = sample_context_lengths(spec, 400);
  for (const int length : lengths) {
    EXPECT_GE(length, 10);
    EXPECT_LE(length, 13);
  }
  for (int value = 10; value <= 13; ++value) {
    EXPECT_GT(std::count(lengths.begin(), lengths.end(), value), 60) << value;
  }
}

TEST(ContextLengths, AreReproducibleAndPrefixConsistent) {
  const ContextSpec spec{.kind = ContextSpec::Kind::kLogNormal, .length = 2048, .min_length = 64,
                         .max_length = 32768, .sigma = 0.8, .seed = 7};
  const auto eight = sample_context_lengths(spec, 8);
  const auto sixteen = sample_context_lengths(spec, 16);
  EXPECT_EQ(eight, sample_context_lengths(spec, 8));
  EXPECT_TRUE(std::equal(eight.begin(), eight.end(), sixteen.begin()));
  ContextSpec other = spec;
  other.seed = 8;
  EXPECT_NE(eight, sample_context_lengths(other, 8));
}

TEST(ContextLengths, LognormalHasItsMedianAndIsClamped) {
  const ContextSpec spec{.kind = ContextSpec::Kind::kLogNormal, .length = 2048, .min_length = 512,
                         .max_length = 8192, .sigma = 1.0, .seed = 3};
  auto lengths = sample_context_lengths(spec, 4001);
  EXPECT_EQ(*std::min_element(lengths.begin(), lengths.end()), 512);
  EXPECT_EQ(*std::max_element(lengths.begin(), lengths.end()), 8192);
  std::nth_element(lengths.begin(), lengths.begin() + 2000, lengths.end());
  // The sample median of 4001 draws is within ~4 % of the true median (its sd is ≈ 2 %).
  EXPECT_NEAR(lengths[2000], 2048, 2048 * 0.08);
}

}  // namespace
}  // namespace mlalab::ab
