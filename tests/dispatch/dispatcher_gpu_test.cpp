// The dispatcher as a serving engine uses it: keys prepared, one decode step captured as a
// CUDA graph, and the graph replayed with new sequence lengths every step. One graph per batch
// bucket holds 4 attention calls (4 layers' q and outputs over one cache); each replay gets
// fresh random lengths up to the key's max context, poisoned outputs, and every call's output
// compared with the fp64 reference. The launch shape depends on the key alone, so a grid
// captured for one set of lengths must be right for all of them: with the heuristic split and
// with the balanced one, whose CTAs find their share of the live tokens at every replay.
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "bench/bench_runner.h"
#include "bench/check.h"
#include "bench/cuda_raii.h"
#include "bench/problem.h"
#include "bench/require_gpu.h"
#include "dispatch/dispatcher.h"
#include "kernels/reference/reference.h"
#include "kernels/registry.h"

namespace mlalab::dispatch {
namespace {

using bench::DeviceBuffer;

constexpr int kHeads = 16;
constexpr int kPageSize = 64;
constexpr int kMaxContext = 2048;
constexpr int kCallsPerStep = 4;  // attention calls in one captured step, as of 4 layers
constexpr int kReplays = 5;

// Another layer's q: that of a problem of the same shape from another seed (whose cache, of
// one token per sequence, is not used).
std::vector<bf16> other_layer_q(int batch, std::uint64_t seed) {
  return bench::make_problem({.batch = batch,
                              .num_heads = kHeads,
                              .seq_lens = bench::uniform_lengths(batch, 1),
                              .page_size = kPageSize,
                              .seed = seed})
      .q;
}

// One decode step's calls on the device: one KV cache, page table, length vector and sinks,
// shared by kCallsPerStep layers that each have their own q, out and lse. Every sequence's
// page-table row covers kMaxContext tokens, so any lengths up to it are valid.
class DecodeStep {
 public:
  DecodeStep(int batch, std::uint64_t seed)
      : host_(bench::make_problem({.layout = Layout::kV3,
                                   .batch = batch,
                                   .num_heads = kHeads,
                                   .seq_lens = bench::uniform_lengths(batch, kMaxContext),
                                   .page_size = kPageSize,
                                   .with_sinks = true,
                                   .seed = seed})),
        kv_cache_(DeviceBuffer<bf16>::from_host(host_.kv_cache)),
        page_table_(DeviceBuffer<std::int32_t>::from_host(host_.page_table)),
        seq_lens_(DeviceBuffer<std::int32_t>::from_host(host_.seq_lens)),
        sinks_(DeviceBuffer<float>::from_host(host_.sinks)),
        checked_(bench::validation_batch_indices(batch)) {
    for (int call = 0; call < kCallsPerStep; ++call) {
      q_host_.push_back(call == 0 ? host_.q : other_layer_q(batch, seed + call));
      q_.push_back(DeviceBuffer<bf16>::from_host(q_host_.back()));
      out_.emplace_back(host_.out.size());
      lse_.emplace_back(host_.lse.size());
    }
  }

  // The call of one layer, on device pointers.
  DecodeParams params(int call) {
    DecodeParams params = host_.params();
    params.q = q_[call].data();
    params.kv_cache = kv_cache_.data();
    params.page_table = page_table_.data();
    params.seq_lens = seq_lens_.data();
    params.sink_logits = sinks_.data();
    params.out = out_[call].data();
    params.lse = lse_[call].data();
    return params;
  }

  // Before a replay, outside the graph: the step's lengths, and every output poisoned so that
  // a row a replay leaves unwritten fails the check.
  void begin_step(const std::vector<int>& lengths, cudaStream_t stream) {
    host_.seq_lens.assign(lengths.begin(), lengths.end());
    MLALAB_CUDA_TRY(cudaMemcpyAsync(seq_lens_.data(), host_.seq_lens.data(), seq_lens_.bytes(),
                                    cudaMemcpyHostToDevice, stream));
    for (int call = 0; call < kCallsPerStep; ++call) {
      MLALAB_CUDA_TRY(
          cudaMemsetAsync(out_[call].data(), bench::kPoisonByte, out_[call].bytes(), stream));
      MLALAB_CUDA_TRY(
          cudaMemsetAsync(lse_[call].data(), bench::kPoisonByte, lse_[call].bytes(), stream));
    }
  }

  // The outputs of the first `calls` layers against the reference for the step's lengths, on
  // bench's sample of the batch (all of it up to 8 sequences).
  void expect_matches_reference(int calls, const std::string& where) {
    for (int call = 0; call < calls; ++call) {
      DecodeParams reference_params = host_.params();
      reference_params.q = q_host_[call].data();
      const kernels::ReferenceResult reference =
          kernels::reference_decode(reference_params, checked_);
      const bench::CheckResult check = bench::check_against_reference(
          host_, out_[call].download(), lse_[call].download(), reference, checked_);
      EXPECT_TRUE(check.passed) << where << ", call " << call << ": " << check.first_failure
                                << " (NaN " << check.nan_count << ", unwritten "
                                << check.unwritten_count << ")";
    }
  }

 private:
  bench::HostProblem host_;
  DeviceBuffer<bf16> kv_cache_;
  DeviceBuffer<std::int32_t> page_table_, seq_lens_;
  DeviceBuffer<float> sinks_;
  std::vector<int> checked_;
  std::vector<std::vector<bf16>> q_host_;
  std::vector<DeviceBuffer<bf16>> q_;
  std::vector<DeviceBuffer<bf16>> out_;
  std::vector<DeviceBuffer<float>> lse_;
};

// Random lengths in [0, kMaxContext], with kMaxContext, 0 and 1 among them as far as the batch
// allows.
std::vector<int> step_lengths(int batch, std::uint64_t seed) {
  return bench::mixed_lengths(batch, kMaxContext, seed);
}

class DispatcherGraph : public ::testing::TestWithParam<std::tuple<int, bool>> {};

TEST_P(DispatcherGraph, EveryReplayWithNewLengthsMatchesTheReference) {
  MLALAB_REQUIRE_GPU();
  const auto [batch, balanced] = GetParam();
  DecodeStep step(batch, /*seed=*/7000 + batch);
  const SplitPolicy split{.kind = balanced ? SplitPolicy::Kind::kBalanced
                                           : SplitPolicy::Kind::kHeuristic};
  Dispatcher dispatcher(Layout::kV3, kHeads, kPageSize, std::nullopt, split);
  const DispatchKey key{.batch = batch, .max_context = kMaxContext};
  dispatcher.prepare(std::vector{key});
  const ResolvedLaunch* resolved = dispatcher.find(key);
  ASSERT_NE(resolved, nullptr);
  EXPECT_EQ(resolved->plan.balanced(), balanced);
  std::printf("[ dispatch ] %s: %s, %d splits, %d workers, %zu B of workspace\n",
              key.to_string().c_str(), resolved->source.c_str(), resolved->plan.num_splits,
              resolved->plan.workers, dispatcher.workspace_bytes());

  const bench::CudaStream stream;
  const std::size_t workspace_bytes = dispatcher.workspace_bytes();
  bench::CudaGraph graph;
  graph.capture(stream.get(), [&](cudaStream_t capturing) {
    for (int call = 0; call < kCallsPerStep; ++call) {
      const DecodeParams params = step.params(call);
      const kernels::LaunchStatus status = dispatcher.run(params, kMaxContext, capturing);
      EXPECT_TRUE(status.ok()) << "call " << call << ": "
                               << kernels::launch_failure_text(status, params, resolved->config);
    }
  });
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(dispatcher.workspace_bytes(), workspace_bytes);  // nothing was allocated

  for (int replay = 0; replay < kReplays; ++replay) {
    step.begin_step(step_lengths(batch, 100 * batch + replay), stream.get());
    graph.replay(stream.get());
    stream.synchronize();
    step.expect_matches_reference(kCallsPerStep, fmt::format("{}, replay {}", key.to_string(),
                                                             replay));
  }
}

INSTANTIATE_TEST_SUITE_P(DispatcherBatchBuckets, DispatcherGraph,
                         ::testing::Combine(::testing::Values(1, 8, 16, 32, 64, 128),
                                            ::testing::Bool()),
                         [](const ::testing::TestParamInfo<std::tuple<int, bool>>& info) {
                           return "batch_" + std::to_string(std::get<0>(info.param)) +
                                  (std::get<1>(info.param) ? "_balanced" : "_heuristic");
                         });

// An engine that forgot a key learns it at capture time, and loses nothing: the throw enqueues
// nothing and allocates nothing, so the capture goes on, ends, and its graph replays right.
TEST(DispatcherCapture, AnUnpreparedKeyThrowsAndTheCaptureStaysUsable) {
  MLALAB_REQUIRE_GPU();
  constexpr int kBatch = 4;
  DecodeStep step(kBatch, /*seed=*/7100);
  Dispatcher dispatcher(Layout::kV3, kHeads, kPageSize);
  dispatcher.prepare(std::vector{DispatchKey{.batch = kBatch, .max_context = kMaxContext}});
  const DispatchKey unprepared{.batch = kBatch, .max_context = 2 * kMaxContext};

  const bench::CudaStream stream;
  bench::CudaGraph graph;
  graph.capture(stream.get(), [&](cudaStream_t capturing) {
    EXPECT_TRUE(dispatcher.run(step.params(0), kMaxContext, capturing).ok());
    try {
      dispatcher.run(step.params(1), unprepared.max_context, capturing);
      ADD_FAILURE() << "run() of an unprepared key during capture did not throw";
    } catch (const UnpreparedKey& error) {
      EXPECT_EQ(std::string(error.what()),
                "no prepared launch for batch 4, max context 4096 while the stream is "
                "capturing: call Dispatcher::prepare with this key before capture");
    }
    EXPECT_THROW(dispatcher.prepare(std::vector{unprepared}, capturing), std::logic_error);
    EXPECT_EQ(dispatcher.find(unprepared), nullptr);

    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    EXPECT_EQ(cudaStreamIsCapturing(capturing, &capture), cudaSuccess);
    EXPECT_EQ(capture, cudaStreamCaptureStatusActive);
    EXPECT_TRUE(dispatcher.run(step.params(1), kMaxContext, capturing).ok());
  });
  ASSERT_FALSE(HasFailure());

  for (int replay = 0; replay < 2; ++replay) {
    step.begin_step(step_lengths(kBatch, 7200 + replay), stream.get());
    graph.replay(stream.get());
    stream.synchronize();
    step.expect_matches_reference(/*calls=*/2, fmt::format("replay {}", replay));
  }
}

}  // namespace
}  // namespace mlalab::dispatch
