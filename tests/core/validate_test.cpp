#include "core/validate.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "core/layout.h"

namespace mlalab {
namespace {

// A small valid call, built by hand: 3 sequences (5, 0 and 12 tokens) over pages of 4 tokens.
// Table entries past each sequence's last page hold garbage, which validation must accept.
class ValidateTest : public ::testing::Test {
 protected:
  static constexpr int kBatch = 3;
  static constexpr int kHeads = 4;
  static constexpr int kPageSize = 4;
  static constexpr int kNumPages = 5;
  static constexpr int kMaxPagesPerSeq = 3;
  static constexpr LayoutDims kDims = dims_of(Layout::kV3);

  ValidateTest()
      : q_(kBatch * kHeads * kDims.d_qk),
        kv_cache_(kNumPages * kPageSize * kDims.d_qk),
        out_(kBatch * kHeads * kDims.d_v),
        page_table_{1, 3, -7,     // 5 tokens: pages 1 and 3; the third entry is garbage
                    99, -1, 1000,  // empty: every entry is garbage
                    0, 2, 4},     // 12 tokens: three full pages
        seq_lens_{5, 0, 12},
        sinks_(kHeads),
        lse_(kBatch * kHeads) {
    params_ = DecodeParams{.q = q_.data(),
                           .kv_cache = kv_cache_.data(),
                           .page_table = page_table_.data(),
                           .seq_lens = seq_lens_.data(),
                           .sink_logits = sinks_.data(),
                           .out = out_.data(),
                           .lse = lse_.data(),
                           .batch = kBatch,
                           .num_heads = kHeads,
                           .d_qk = kDims.d_qk,
                           .d_v = kDims.d_v,
                           .page_size = kPageSize,
                           .num_pages = kNumPages,
                           .max_pages_per_seq = kMaxPagesPerSeq,
                           .softmax_scale = 0.1f};
    set_contiguous_strides(params_);
  }

  std::optional<InputError> validate_all() const {
    return validate_tables(params_, page_table_.data(), seq_lens_.data());
  }

  std::vector<bf16> q_, kv_cache_, out_;
  std::vector<std::int32_t> page_table_, seq_lens_;
  std::vector<float> sinks_, lse_;
  DecodeParams params_;
};

TEST_F(ValidateTest, AcceptsAValidCallWithGarbagePastTheLastPage) {
  EXPECT_FALSE(validate_shapes(params_));
  const auto error = validate_all();
  EXPECT_FALSE(error) << error->message();
}

TEST_F(ValidateTest, AcceptsPaddedStridesAndNoSinks) {
  params_.sink_logits = nullptr;
  params_.q_head_stride = kDims.d_qk + 8;
  params_.q_batch_stride = kHeads * params_.q_head_stride + 16;
  params_.kv_row_stride = kDims.d_qk + 64;
  params_.kv_page_stride = (kPageSize + 1) * params_.kv_row_stride;
  params_.out_head_stride = kDims.d_v + 8;
  params_.out_batch_stride = kHeads * params_.out_head_stride;
  params_.page_table_stride = kMaxPagesPerSeq;  // not a multiple of 8, and need not be
  EXPECT_FALSE(validate_shapes(params_));
}

TEST_F(ValidateTest, AcceptsTheLargestDocumentedSizes) {
  params_.num_heads = kMaxHeads;
  params_.page_size = kMaxPageSize;
  params_.d_qk = dims_of(Layout::kV4).d_qk;
  set_contiguous_strides(params_);
  EXPECT_FALSE(validate_shapes(params_));
}

struct ShapeCase {
  std::string name;
  std::function<void(DecodeParams&)> break_params;
  std::string field;
  std::string value;  // empty: not compared (e.g. addresses)
};

TEST_F(ValidateTest, EveryShapeCheckNamesItsField) {
  constexpr std::int64_t kHuge = std::int64_t{1} << 61;  // a multiple of 8
  constexpr std::int64_t kLargestMultipleOf8 = std::numeric_limits<std::int64_t>::max() - 7;
  const std::vector<ShapeCase> cases = {
      {"batch 0", [](auto& p) { p.batch = 0; }, "batch", "0"},
      {"batch too large", [](auto& p) { p.batch = kMaxBatch + 1; }, "batch", "65537"},
      {"no heads", [](auto& p) { p.num_heads = 0; }, "num_heads", "0"},
      {"129 heads", [](auto& p) { p.num_heads = 129; }, "num_heads", "129"},
      {"d_qk of no layout", [](auto& p) { p.d_qk = 128; }, "d_qk", "128"},
      {"d_v of no layout", [](auto& p) { p.d_v = 448; }, "d_v", "448"},
      {"page_size 0", [](auto& p) { p.page_size = 0; }, "page_size", "0"},
      {"page_size not a power of two", [](auto& p) { p.page_size = 48; }, "page_size", "48"},
      {"page_size too large", [](auto& p) { p.page_size = 256; }, "page_size", "256"},
      {"no pages", [](auto& p) { p.num_pages = 0; }, "num_pages", "0"},
      {"no page-table columns", [](auto& p) { p.max_pages_per_seq = 0; }, "max_pages_per_seq",
       "0"},
      {"more than 2^30 tokens per sequence",
       [](auto& p) { p.max_pages_per_seq = (1 << 30) / kPageSize + 1; }, "max_pages_per_seq",
       std::to_string((1 << 30) / kPageSize + 1)},
      {"softmax_scale 0", [](auto& p) { p.softmax_scale = 0.0f; }, "softmax_scale", "0"},
      {"negative softmax_scale", [](auto& p) { p.softmax_scale = -1.0f; }, "softmax_scale", "-1"},
      {"NaN softmax_scale",
       [](auto& p) { p.softmax_scale = std::numeric_limits<float>::quiet_NaN(); },
       "softmax_scale", "nan"},
      {"infinite softmax_scale",
       [](auto& p) { p.softmax_scale = std::numeric_limits<float>::infinity(); },
       "softmax_scale", "inf"},
      {"null q", [](auto& p) { p.q = nullptr; }, "q", "nullptr"},
      {"null kv_cache", [](auto& p) { p.kv_cache = nullptr; }, "kv_cache", "nullptr"},
      {"null page_table", [](auto& p) { p.page_table = nullptr; }, "page_table", "nullptr"},
      {"null seq_lens", [](auto& p) { p.seq_lens = nullptr; }, "seq_lens", "nullptr"},
      {"null out", [](auto& p) { p.out = nullptr; }, "out", "nullptr"},
      {"null lse", [](auto& p) { p.lse = nullptr; }, "lse", "nullptr"},
      {"misaligned q", [](auto& p) { p.q += 1; }, "q", ""},
      {"misaligned kv_cache", [](auto& p) { p.kv_cache += 4; }, "kv_cache", ""},
      {"misaligned page_table", [](auto& p) { p.page_table += 1; }, "page_table", ""},
      {"misaligned seq_lens", [](auto& p) { p.seq_lens += 2; }, "seq_lens", ""},
      {"misaligned sink_logits", [](auto& p) { p.sink_logits += 1; }, "sink_logits", ""},
      {"misaligned out", [](auto& p) { p.out += 1; }, "out", ""},
      {"misaligned lse", [](auto& p) { p.lse += 3; }, "lse", ""},
      {"q_head_stride too small", [](auto& p) { p.q_head_stride = kDims.d_qk - 8; },
       "q_head_stride", "568"},
      {"q_head_stride not a multiple of 8", [](auto& p) { p.q_head_stride = kDims.d_qk + 4; },
       "q_head_stride", "580"},
      {"q_batch_stride too small", [](auto& p) { p.q_batch_stride = kDims.d_qk * (kHeads - 1); },
       "q_batch_stride", "1728"},
      {"q_batch_stride not a multiple of 8", [](auto& p) { p.q_batch_stride += 1; },
       "q_batch_stride", "2305"},
      {"kv_row_stride too small", [](auto& p) { p.kv_row_stride = 512; }, "kv_row_stride", "512"},
      {"kv_row_stride not a multiple of 8", [](auto& p) { p.kv_row_stride = 577; },
       "kv_row_stride", "577"},
      {"kv_page_stride too small", [](auto& p) { p.kv_page_stride = 3 * kDims.d_qk; },
       "kv_page_stride", "1728"},
      {"kv_page_stride not a multiple of 8", [](auto& p) { p.kv_page_stride += 2; },
       "kv_page_stride", "2306"},
      {"page_table_stride too small", [](auto& p) { p.page_table_stride = kMaxPagesPerSeq - 1; },
       "page_table_stride", "2"},
      {"out_head_stride too small", [](auto& p) { p.out_head_stride = 504; }, "out_head_stride",
       "504"},
      {"out_head_stride not a multiple of 8", [](auto& p) { p.out_head_stride = 513; },
       "out_head_stride", "513"},
      {"out_batch_stride too small", [](auto& p) { p.out_batch_stride = 512; },
       "out_batch_stride", "512"},
      {"out_batch_stride not a multiple of 8", [](auto& p) { p.out_batch_stride += 4; },
       "out_batch_stride", "2052"},
      {"q spans more than 2^62 bytes", [=](auto& p) { p.q_batch_stride = kHuge; }, "q", ""},
      {"kv_cache spans more than 2^62 bytes", [=](auto& p) { p.kv_page_stride = kHuge; },
       "kv_cache", ""},
      {"kv_cache span overflows int64",
       [=](auto& p) { p.kv_page_stride = kLargestMultipleOf8; }, "kv_cache", ""},
      {"page_table spans more than 2^62 bytes", [=](auto& p) { p.page_table_stride = kHuge; },
       "page_table", ""},
      {"out spans more than 2^62 bytes", [=](auto& p) { p.out_batch_stride = kHuge; }, "out", ""},
  };
  for (const auto& test_case : cases) {
    SCOPED_TRACE(test_case.name);
    DecodeParams broken = params_;
    test_case.break_params(broken);
    const auto error = validate_shapes(broken);
    ASSERT_TRUE(error);
    EXPECT_EQ(error->field, test_case.field) << error->message();
    if (!test_case.value.empty()) {
      EXPECT_EQ(error->value, test_case.value) << error->message();
    }
    EXPECT_FALSE(error->allowed.empty());
    // validate_tables checks the shapes first and reports the same error.
    const auto table_error = validate_tables(broken, page_table_.data(), seq_lens_.data());
    ASSERT_TRUE(table_error);
    EXPECT_EQ(table_error->field, test_case.field);
  }
}

TEST_F(ValidateTest, AllowedRangesAreSpelledOut) {
  params_.num_heads = 129;
  const auto error = validate_shapes(params_);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->message(), "num_heads = 129: allowed [1, 128]");
}

TEST_F(ValidateTest, RejectsSequenceLongerThanItsPageTableRow) {
  seq_lens_[2] = kMaxPagesPerSeq * kPageSize + 1;
  const auto error = validate_all();
  ASSERT_TRUE(error);
  EXPECT_EQ(error->field, "seq_lens[2]");
  EXPECT_EQ(error->value, "13");
  EXPECT_EQ(error->allowed.rfind("[0, 12]", 0), 0u) << error->allowed;
}

TEST_F(ValidateTest, RejectsNegativeSequenceLength) {
  seq_lens_[1] = -1;
  const auto error = validate_all();
  ASSERT_TRUE(error);
  EXPECT_EQ(error->field, "seq_lens[1]");
  EXPECT_EQ(error->value, "-1");
}

TEST_F(ValidateTest, RejectsUsedPageOutsideTheCache) {
  page_table_[1] = kNumPages;  // sequence 0, second page
  auto error = validate_all();
  ASSERT_TRUE(error);
  EXPECT_EQ(error->field, "page_table[0][1]");
  EXPECT_EQ(error->value, "5");
  EXPECT_EQ(error->allowed.rfind("[0, 5)", 0), 0u) << error->allowed;

  page_table_[1] = 3;
  page_table_[2 * kMaxPagesPerSeq + 2] = -1;  // sequence 2, last page
  error = validate_all();
  ASSERT_TRUE(error);
  EXPECT_EQ(error->field, "page_table[2][2]");
  EXPECT_EQ(error->message(), "page_table[2][2] = -1: allowed " + error->allowed);
}

TEST_F(ValidateTest, AnEntryBecomesCheckedOnceTheSequenceReachesIt) {
  seq_lens_[0] = 9;  // now uses the third entry of its row, which holds -7
  const auto error = validate_all();
  ASSERT_TRUE(error);
  EXPECT_EQ(error->field, "page_table[0][2]");
  EXPECT_EQ(error->value, "-7");
}

TEST_F(ValidateTest, HonoursPageTableStride) {
  // Rows of 4 entries with 3 used columns: the padding column holds garbage and is never read.
  std::vector<std::int32_t> padded = {1, 3, -7, -100, 99, -1, 1000, -100, 0, 2, 4, -100};
  params_.page_table_stride = 4;
  params_.page_table = padded.data();
  EXPECT_FALSE(validate_tables(params_, padded.data(), seq_lens_.data()));
  padded[9] = kNumPages + 1;  // sequence 2, second page
  const auto error = validate_tables(params_, padded.data(), seq_lens_.data());
  ASSERT_TRUE(error);
  EXPECT_EQ(error->field, "page_table[2][1]");
}

TEST_F(ValidateTest, RejectsMissingHostCopies) {
  auto error = validate_tables(params_, nullptr, seq_lens_.data());
  ASSERT_TRUE(error);
  EXPECT_EQ(error->field, "page_table (host copy)");
  error = validate_tables(params_, page_table_.data(), nullptr);
  ASSERT_TRUE(error);
  EXPECT_EQ(error->field, "seq_lens (host copy)");
}

}  // namespace
}  // namespace mlalab
