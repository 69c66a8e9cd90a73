#include "core/kernel_config.h"

#include <gtest/gtest.h>

namespace mlalab {
namespace {

TEST(SplitPolicy, ParsesEveryForm) {
  EXPECT_EQ(parse_split_policy("heuristic")->kind, SplitPolicy::Kind::kHeuristic);
  const auto fixed = parse_split_policy("fixed:8");
  ASSERT_TRUE(fixed);
  EXPECT_EQ(fixed->kind, SplitPolicy::Kind::kFixed);
  EXPECT_EQ(fixed->value, 8);
  const auto target = parse_split_policy("target_ctas:512");
  ASSERT_TRUE(target);
  EXPECT_EQ(target->kind, SplitPolicy::Kind::kTargetCtas);
  EXPECT_EQ(target->value, 512);
  EXPECT_EQ(target->to_string(), "target_ctas:512");
  const auto balanced = parse_split_policy("balanced");
  ASSERT_TRUE(balanced);
  EXPECT_EQ(balanced->kind, SplitPolicy::Kind::kBalanced);
  EXPECT_EQ(balanced->value, 0);
  EXPECT_EQ(balanced->to_string(), "balanced");
  const auto workers = parse_split_policy("balanced:96");
  ASSERT_TRUE(workers);
  EXPECT_EQ(workers->kind, SplitPolicy::Kind::kBalanced);
  EXPECT_EQ(workers->value, 96);
  EXPECT_EQ(workers->to_string(), "balanced:96");
}

TEST(SplitPolicy, RejectsWithAllowedForms) {
  for (const char* bad : {"fixed:0", "fixed:257", "fixed:x", "target_ctas:-1", "splits:4", "4",
                          "balanced:0", "balanced:1025", "balanced:"}) {
    std::string error;
    EXPECT_FALSE(parse_split_policy(bad, &error)) << bad;
    EXPECT_NE(error.find("allowed"), std::string::npos) << error;
    EXPECT_NE(error.find("balanced:W with W in [1, 1024]"), std::string::npos) << error;
  }
}

TEST(VariantName, RoundTrips) {
  const VariantShape shape{.block_h = 16, .block_t = 32, .warps = 4, .stages = 2};
  EXPECT_EQ(variant_name(shape), "h16_t32_w4_s2");
  EXPECT_EQ(parse_variant_name("h16_t32_w4_s2"), shape);
  EXPECT_FALSE(parse_variant_name("h16_t32_w4"));
  EXPECT_FALSE(parse_variant_name("t16_h32_w4_s2"));
  EXPECT_FALSE(parse_variant_name("h16_t32_w4_s2_"));

  const VariantShape wgmma{.family = KernelFamily::kWgmma,
                           .block_h = 64, .block_t = 64, .warps = 8, .stages = 2};
  EXPECT_EQ(variant_name(wgmma), "wgmma_h64_t64_w8_s2");
  EXPECT_EQ(parse_variant_name("wgmma_h64_t64_w8_s2"), wgmma);
  EXPECT_NE(parse_variant_name("h64_t64_w8_s2"), wgmma);
  EXPECT_FALSE(parse_variant_name("wgmma_"));
  EXPECT_FALSE(parse_variant_name("mma_h64_t64_w8_s2"));

  const VariantShape whole{.family = KernelFamily::kWgmma, .block_h = 16, .block_t = 64,
                           .warps = 4, .stages = 2, .whole_tiles = true};
  EXPECT_EQ(variant_name(whole), "wgmma_h16_t64_w4_s2_whole");
  EXPECT_EQ(parse_variant_name("wgmma_h16_t64_w4_s2_whole"), whole);
  EXPECT_NE(parse_variant_name("wgmma_h16_t64_w4_s2"), whole);
  EXPECT_FALSE(parse_variant_name("wgmma_h16_t64_w4_whole"));
  EXPECT_FALSE(parse_variant_name("wgmma_h16_t64_w4_s2_whole_"));
  EXPECT_FALSE(parse_variant_name("wgmma_h16_t64_w4_s2_wh"));
}

}  // namespace
}  // namespace mlalab
