#include "kernels/timeline.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/layout.h"
#include "core/validate.h"
#include "kernels/registry.h"

namespace mlalab::kernels {
namespace {

constexpr int kBatch = 5;
constexpr int kHeads = 5;  // odd: the partial results' bytes are then no multiple of 16
constexpr int kDv = 512;

// The records go after the partial results, 16-byte aligned, one per CTA; the rest of the
// plan is as it was.
TEST(WithTimeline, PutsOneRecordPerCtaAfterThePartialResults) {
  const LaunchPlan one_split{.head_blocks = 2, .num_splits = 1, .ctas = kBatch * 2};
  const LaunchPlan split{.head_blocks = 2, .num_splits = 3, .ctas = kBatch * 2 * 3,
                         .workspace_bytes = split_workspace_bytes(3, kBatch, kHeads, kDv)};
  const LaunchPlan balanced{.head_blocks = 2, .workers = 7, .ctas = 2 * 7,
                            .workspace_bytes = balanced_workspace_bytes(7, kBatch, kHeads, kDv)};
  for (const LaunchPlan& plan : {one_split, split, balanced}) {
    const LaunchPlan recorded = with_timeline(plan, kBatch, kHeads, kDv);
    const std::size_t offset = timeline_offset(recorded, kBatch, kHeads, kDv);
    EXPECT_TRUE(recorded.timeline);
    EXPECT_GE(offset, plan.workspace_bytes);
    EXPECT_LT(offset, plan.workspace_bytes + 16);
    EXPECT_EQ(offset % 16, 0u);
    EXPECT_EQ(recorded.workspace_bytes, offset + plan.ctas * sizeof(CtaTimeline));
    EXPECT_EQ(recorded.ctas, plan.ctas);
    EXPECT_EQ(recorded.num_splits, plan.num_splits);
    EXPECT_EQ(recorded.workers, plan.workers);
  }
  EXPECT_EQ(timeline_offset(with_timeline(one_split, kBatch, kHeads, kDv), kBatch, kHeads, kDv),
            0u);
  EXPECT_GT(timeline_offset(with_timeline(split, kBatch, kHeads, kDv), kBatch, kHeads, kDv),
            split.workspace_bytes);  // the round-up is exercised
}

// A normal build's kernels cannot record: a plan that asks for a timeline is refused before any
// CUDA work, as a plan that does not match the call (a timeline build would launch it). The
// buffers are host memory that validate_shapes accepts; the refusal comes first, so no kernel
// ever reads them.
TEST(WithTimeline, ANormalBuildRefusesAPlanThatAsksForOne) {
  if (kTimelineBuild) GTEST_SKIP() << "a timeline build records timelines";
  const VariantShape shape{.block_h = 16, .block_t = 16, .warps = 4, .stages = 2};
  if (find_variant(shape) == nullptr) GTEST_SKIP() << "h16_t16_w4_s2 is not compiled";
  const LayoutDims dims = dims_of(Layout::kV3);
  constexpr int kPage = 64;
  std::vector<bf16> q(2 * 16 * dims.d_qk);
  std::vector<bf16> kv_cache(2 * kPage * dims.d_qk);
  std::vector<std::int32_t> page_table{0, 1};
  std::vector<std::int32_t> seq_lens{10, 20};
  std::vector<bf16> out(2 * 16 * dims.d_v);
  std::vector<float> lse(2 * 16);
  DecodeParams params{.q = q.data(), .kv_cache = kv_cache.data(), .page_table = page_table.data(),
                      .seq_lens = seq_lens.data(), .out = out.data(), .lse = lse.data(),
                      .batch = 2, .num_heads = 16, .d_qk = dims.d_qk, .d_v = dims.d_v,
                      .page_size = kPage, .num_pages = 2, .max_pages_per_seq = 1,
                      .softmax_scale = 0.05f};
  set_contiguous_strides(params);
  // The shapes are valid, so a refusal is the plan's.
  ASSERT_FALSE(validate_shapes(params)) << validate_shapes(params)->message();
  const KernelConfig config{.shape = shape,
                            .split = {.kind = SplitPolicy::Kind::kFixed, .value = 1}};
  const LaunchPlan plan =
      with_timeline(plan_launch(params, config, /*max_seq_len=*/20, DeviceSlots{}), params.batch,
                    params.num_heads, params.d_v);
  std::vector<std::byte> workspace(plan.workspace_bytes);
  const LaunchStatus status = launch(params, config, plan, workspace.data(), /*stream=*/nullptr);
  EXPECT_EQ(status.refusal, LaunchRefusal::kInvalidInput);
  EXPECT_EQ(status.error, cudaErrorInvalidValue);
}

}  // namespace
}  // namespace mlalab::kernels
