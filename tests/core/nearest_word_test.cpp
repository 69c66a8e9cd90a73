#include "core/nearest_word.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace mlalab {
namespace {

const std::vector<std::string> kSubcommands = {"configs", "bench", "verify", "ab"};

TEST(TypoDistance, CountsEachEditOnce) {
  EXPECT_EQ(typo_distance("bench", "bench"), 0);
  EXPECT_EQ(typo_distance("bnech", "bench"), 1);   // e and n swapped
  EXPECT_EQ(typo_distance("bech", "bench"), 1);    // n left out
  EXPECT_EQ(typo_distance("benchh", "bench"), 1);  // h doubled
  EXPECT_EQ(typo_distance("bunch", "bench"), 1);   // e replaced
  EXPECT_EQ(typo_distance("config", "configs"), 1);
  EXPECT_EQ(typo_distance("vreify", "verify"), 1);
  EXPECT_EQ(typo_distance("ba", "ab"), 1);
  // b-e-n-c-h against v-e-r-i-f-y: replace b, n, c, h by v, r, i, f and add y.
  EXPECT_EQ(typo_distance("bench", "verify"), 5);
  EXPECT_EQ(typo_distance("", "ab"), 2);
}

TEST(NearestWord, SuggestsOnlyLikelyTypos) {
  EXPECT_EQ(nearest_word("bnech", kSubcommands), "bench");
  EXPECT_EQ(nearest_word("config", kSubcommands), "configs");
  EXPECT_EQ(nearest_word("verfy", kSubcommands), "verify");
  EXPECT_EQ(nearest_word("ba", kSubcommands), "ab");  // 1 typo, half of "ab"
  EXPECT_EQ(nearest_word("xy", kSubcommands), std::nullopt);     // 2 typos: all of "ab"
  EXPECT_EQ(nearest_word("bnehc", kSubcommands), "bench");       // 2 typos of 5 letters
  EXPECT_EQ(nearest_word("benchmark", kSubcommands), std::nullopt);  // 4 letters too many
  EXPECT_EQ(nearest_word("run", kSubcommands), std::nullopt);
}

}  // namespace
}  // namespace mlalab
