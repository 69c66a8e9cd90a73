#pragma once
// What checks and times a kernel call on one problem, shared by `mlalab bench` and the A/B
// lab (`mlalab ab`) so that both measure a call exactly alike:
//   - DeviceProblem: the device copy of a problem, with R replicas of (q, kv_cache) that
//     together span ≥ 4 × L2 (replica_count), so every timed call reads its KV from HBM;
//   - LazyReference and reference_mismatch: the fp64 reference, computed once per problem on
//     first use, and the comparison of an output with it;
//   - validate_on_device: one call on poisoned outputs, checked against the reference;
//   - ReplicaTimer: CUDA graphs of one call per replica, warmed up, whose replays are timed
//     with events; a call's time is replay time / R.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bench/cuda_raii.h"
#include "bench/problem.h"
#include "core/decode_params.h"
#include "core/kernel_config.h"
#include "kernels/reference/reference.h"
#include "kernels/split_plan.h"

namespace mlalab::bench {

// Replays before timing: the first pays for instantiation upload and clock ramp-up.
constexpr int kWarmupReplays = 3;

// The device copy of one problem: shared tables and outputs, and R replicas of (q, kv_cache)
// in one allocation; params(r) points at replica r.
class DeviceProblem {
 public:
  DeviceProblem(HostProblem& host, std::size_t l2_bytes);

  int replicas() const { return replicas_; }
  DecodeParams params(int replica) const;

  void upload_outputs(const HostProblem& host);
  std::vector<bf16> download_out() const { return out_.download(); }
  std::vector<float> download_lse() const { return lse_.download(); }

 private:
  DecodeParams host_params_;
  DeviceBuffer<std::int32_t> page_table_;
  DeviceBuffer<std::int32_t> seq_lens_;
  DeviceBuffer<float> sinks_;
  DeviceBuffer<bf16> out_;
  DeviceBuffer<float> lse_;
  DeviceBuffer<bf16> inputs_;
  std::size_t q_elems_ = 0;
  std::size_t kv_elems_ = 0;
  std::size_t kv_offset_ = 0;
  std::size_t replica_elems_ = 0;
  int replicas_ = 0;
};

// The reference for one problem, computed on first use and shared by every config checked on
// it: on every batch entry, or only on `indices` (validation_batch_indices) for large batches.
class LazyReference {
 public:
  // A line goes to *progress when the reference is computed, when given.
  LazyReference(HostProblem& problem, std::vector<int> indices,
                std::ostream* progress = nullptr);

  const kernels::ReferenceResult& get();
  std::span<const int> indices() const { return indices_; }

 private:
  HostProblem& problem_;
  std::vector<int> indices_;
  std::ostream* progress_;
  std::optional<kernels::ReferenceResult> result_;
};

// Compares an output ([batch, heads, d_v] and [batch, heads], laid out like problem.out and
// problem.lse) with the reference; the failure text when it disagrees.
std::optional<std::string> reference_mismatch(const HostProblem& problem,
                                              std::span<const bf16> out,
                                              std::span<const float> lse,
                                              LazyReference& reference);

// Runs one planned call of replica 0 on poisoned outputs (so entries the kernel never writes
// fail the check), waits for it and compares with the reference. Work still queued on
// `stream` is waited for first, so that no other call writes the outputs meanwhile. The
// failure (a launch or kernel error, or the mismatch) when it fails, nullopt when it passes;
// throws CudaError when the work queued before it failed. A kernel fault leaves the CUDA
// context unusable; the caller checks that (cudaDeviceSynchronize) afterwards.
std::optional<std::string> validate_on_device(HostProblem& host, DeviceProblem& device_problem,
                                              const KernelConfig& config,
                                              const kernels::LaunchPlan& plan, void* workspace,
                                              cudaStream_t stream, LazyReference& reference);

// A CUDA graph that calls the config once per replica, so that every call reads its KV from
// HBM, and no host launch cost enters the timing. Construction captures the graph and replays
// it kWarmupReplays times.
//
// Given several workspaces, one graph per workspace (instances of the same calls), replayed in
// turn. Two instances of one launch can differ in speed by up to ±1 % at 128 heads, fixed for
// their life (docs/perf-notes.md, "The lab's A/A offsets at 128 heads"): an arm timed on one
// instance carries its offset through every sample, one timed on several carries their
// average. A launch without a workspace takes null pointers, one per instance.
class ReplicaTimer {
 public:
  ReplicaTimer(const DeviceProblem& device_problem, const KernelConfig& config,
               const kernels::LaunchPlan& plan, std::span<void* const> workspaces,
               cudaStream_t stream);
  ReplicaTimer(const DeviceProblem& device_problem, const KernelConfig& config,
               const kernels::LaunchPlan& plan, void* workspace, cudaStream_t stream)
      : ReplicaTimer(device_problem, config, plan, std::span<void* const>(&workspace, 1),
                     stream) {}
  ReplicaTimer(const ReplicaTimer&) = delete;
  ReplicaTimer& operator=(const ReplicaTimer&) = delete;

  // Replays each graph `replays` times (not timed), e.g. to bring the clocks up after a pause.
  void warm_up(int replays = kWarmupReplays) const;

  // Replays the graphs `replays` times in turn, back to back, each between two events: per
  // replay, the time of one call in µs (replay time / replicas).
  std::vector<double> time_calls_us(int replays);

  int replicas() const { return replicas_; }

 private:
  cudaStream_t stream_;
  int replicas_;
  std::vector<std::unique_ptr<CudaGraph>> graphs_;
  std::size_t next_graph_ = 0;
  CudaEvent start_;
  CudaEvent stop_;
};

}  // namespace mlalab::bench
