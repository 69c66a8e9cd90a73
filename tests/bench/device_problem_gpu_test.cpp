// ReplicaTimer on a real GPU: a split launch timed as several instances replays each of them in
// turn, and its output still matches the fp64 reference. Skips with the reason without a GPU.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "bench/check.h"
#include "bench/cuda_raii.h"
#include "bench/device_info.h"
#include "bench/device_problem.h"
#include "bench/problem.h"
#include "bench/require_gpu.h"
#include "dispatch/feasibility.h"
#include "kernels/registry.h"
#include "kernels/split_plan.h"

namespace mlalab::bench {
namespace {

constexpr int kHeads = 16;
constexpr int kSplits = 4;

// The first compiled variant that runs on this GPU at the V3 row width.
const kernels::Variant* runnable_variant(dispatch::Placement* placement) {
  for (const kernels::Variant& variant : kernels::compiled_variants()) {
    *placement = dispatch::judge_here(variant.shape, dims_of(Layout::kV3).d_qk);
    if (placement->verdict.feasible) return &variant;
  }
  return nullptr;
}

TEST(ReplicaTimer, ReplaysEveryInstanceInTurn) {
  MLALAB_REQUIRE_GPU();
  const auto device = query_device();
  dispatch::Placement placement;
  const kernels::Variant* variant = runnable_variant(&placement);
  ASSERT_NE(variant, nullptr) << "no compiled variant runs on this GPU";
  HostProblem host = make_problem(lab_problem_spec(Layout::kV3, kHeads, 64, {1024, 700}, 3));
  DeviceProblem device_problem(host, device->l2_bytes);
  const KernelConfig config{.shape = variant->shape,
                            .split = {.kind = SplitPolicy::Kind::kFixed, .value = kSplits}};
  const kernels::LaunchPlan plan = kernels::plan_launch(
      device_problem.params(0), config, host.max_seq_len(), placement.slots(device->sm_count));
  ASSERT_EQ(plan.num_splits, kSplits);
  ASSERT_GT(plan.workspace_bytes, 0u);

  constexpr int kInstances = 3;
  std::vector<DeviceBuffer<std::byte>> workspaces;
  std::vector<void*> pointers;
  for (int i = 0; i < kInstances; ++i) {
    pointers.push_back(workspaces.emplace_back(plan.workspace_bytes).data());
  }
  CudaStream stream;
  ReplicaTimer timer(device_problem, config, plan, pointers, stream.get());
  // Poisoned after the warm-up, which replays every instance: 0xFF bytes are NaN floats, and a
  // workspace whose instance the timed replays skip keeps them.
  ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);
  for (auto& workspace : workspaces) {
    ASSERT_EQ(cudaMemset(workspace.data(), 0xFF, plan.workspace_bytes), cudaSuccess);
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  for (const double call_us : timer.time_calls_us(kInstances)) {
    EXPECT_TRUE(std::isfinite(call_us) && call_us > 0) << call_us;
  }
  ASSERT_EQ(cudaStreamSynchronize(stream.get()), cudaSuccess);

  const kernels::WorkspaceLayout layout =
      kernels::workspace_layout(plan.num_splits, plan.workers, host.spec.batch, kHeads);
  const std::size_t partial_floats = layout.partial_rows * host.dims.d_v;
  for (int i = 0; i < kInstances; ++i) {
    std::vector<float> partial(partial_floats);
    ASSERT_EQ(cudaMemcpy(partial.data(), workspaces[i].data() + layout.partial_out_offset,
                         partial_floats * sizeof(float), cudaMemcpyDeviceToHost),
              cudaSuccess);
    const auto unwritten = std::count_if(partial.begin(), partial.end(),
                                         [](float value) { return std::isnan(value); });
    EXPECT_EQ(unwritten, 0) << "instance " << i << " of " << kInstances;
  }
  LazyReference reference(host, validation_batch_indices(host.spec.batch));
  const auto mismatch = reference_mismatch(host, device_problem.download_out(),
                                           device_problem.download_lse(), reference);
  EXPECT_FALSE(mismatch) << *mismatch;
}

}  // namespace
}  // namespace mlalab::bench
