#include "bench/device_problem.h"

#include <fmt/format.h>

#include <ostream>
#include <stdexcept>

#include "bench/bench_runner.h"
#include "bench/check.h"
#include "kernels/registry.h"

namespace mlalab::bench {
namespace {

constexpr std::size_t kBf16Bytes = sizeof(bf16);
constexpr double kMicrosPerMilli = 1e3;
// Replica offsets keep cudaMalloc's own alignment, so every replica is laid out exactly like
// a separate allocation (the kernels need at least 16-byte alignment).
constexpr std::size_t kReplicaAlignBytes = 256;

std::size_t round_up(std::size_t value, std::size_t multiple) {
  return (value + multiple - 1) / multiple * multiple;
}

}  // namespace

DeviceProblem::DeviceProblem(HostProblem& host, std::size_t l2_bytes)
    : host_params_(host.params()),
      page_table_(DeviceBuffer<std::int32_t>::from_host(host.page_table)),
      seq_lens_(DeviceBuffer<std::int32_t>::from_host(host.seq_lens)),
      out_(host.out.size()),
      lse_(host.lse.size()) {
  if (!host.sinks.empty()) sinks_ = DeviceBuffer<float>::from_host(host.sinks);
  q_elems_ = host.q.size();
  kv_elems_ = host.kv_cache.size();
  const std::size_t alignment_elems = kReplicaAlignBytes / kBf16Bytes;
  kv_offset_ = round_up(q_elems_, alignment_elems);
  replica_elems_ = round_up(kv_offset_ + kv_elems_, alignment_elems);
  replicas_ = replica_count(replica_elems_ * kBf16Bytes, l2_bytes);
  inputs_ = DeviceBuffer<bf16>(replica_elems_ * replicas_);
  MLALAB_CUDA_TRY(cudaMemcpy(inputs_.data(), host.q.data(), q_elems_ * kBf16Bytes,
                             cudaMemcpyHostToDevice));
  MLALAB_CUDA_TRY(cudaMemcpy(inputs_.data() + kv_offset_, host.kv_cache.data(),
                             kv_elems_ * kBf16Bytes, cudaMemcpyHostToDevice));
  // The other replicas are device-side copies of the first: far faster than re-uploading.
  for (int r = 1; r < replicas_; ++r) {
    MLALAB_CUDA_TRY(cudaMemcpy(inputs_.data() + r * replica_elems_, inputs_.data(),
                               replica_elems_ * kBf16Bytes, cudaMemcpyDeviceToDevice));
  }
  // Device-to-device cudaMemcpy returns before the copy is done, on the legacy default stream,
  // which the harness's non-blocking streams do not wait for: finish the copies here.
  MLALAB_CUDA_TRY(cudaDeviceSynchronize());
}

DecodeParams DeviceProblem::params(int replica) const {
  DecodeParams params = host_params_;
  const bf16* base = inputs_.data() + replica * replica_elems_;
  params.q = base;
  params.kv_cache = base + kv_offset_;
  params.page_table = page_table_.data();
  params.seq_lens = seq_lens_.data();
  params.sink_logits = sinks_.size() > 0 ? sinks_.data() : nullptr;
  params.out = out_.data();
  params.lse = lse_.data();
  return params;
}

void DeviceProblem::upload_outputs(const HostProblem& host) {
  out_.upload(host.out);
  lse_.upload(host.lse);
}

LazyReference::LazyReference(HostProblem& problem, std::vector<int> indices,
                             std::ostream* progress)
    : problem_(problem), indices_(std::move(indices)), progress_(progress) {}

const kernels::ReferenceResult& LazyReference::get() {
  if (!result_) {
    const DecodeParams params = problem_.params();
    if (progress_) {
      *progress_ << fmt::format("  fp64 reference on {} of {} sequences",
                                indices_.empty() ? params.batch : indices_.size(),
                                params.batch)
                 << std::endl;
    }
    result_ = kernels::reference_decode(params, indices_);
  }
  return *result_;
}

std::optional<std::string> reference_mismatch(const HostProblem& problem,
                                              std::span<const bf16> out,
                                              std::span<const float> lse,
                                              LazyReference& reference) {
  return failure_text(
      check_against_reference(problem, out, lse, reference.get(), reference.indices()));
}

std::optional<std::string> validate_on_device(HostProblem& host, DeviceProblem& device_problem,
                                              const KernelConfig& config,
                                              const kernels::LaunchPlan& plan, void* workspace,
                                              cudaStream_t stream, LazyReference& reference) {
  // Calls still queued on the stream (another config's warm-up replays) would write the
  // outputs after the poison, and could pass a config that leaves entries unwritten.
  MLALAB_CUDA_TRY(cudaStreamSynchronize(stream));
  host.poison_outputs();
  device_problem.upload_outputs(host);
  // cudaMemcpy from pageable memory may return before its last DMA lands, on the legacy
  // stream that `stream` does not wait for; the poison must be in place before the launch.
  MLALAB_CUDA_TRY(cudaDeviceSynchronize());
  if (const kernels::LaunchStatus status =
          kernels::launch(device_problem.params(0), config, plan, workspace, stream);
      !status.ok()) {
    cudaGetLastError();
    return kernels::launch_failure_text(status, device_problem.params(0), config);
  }
  if (const cudaError_t status = cudaStreamSynchronize(stream); status != cudaSuccess) {
    return fmt::format("kernel failed: {}", cudaGetErrorString(status));
  }
  const auto out = device_problem.download_out();
  const auto lse = device_problem.download_lse();
  return reference_mismatch(host, out, lse, reference);
}

ReplicaTimer::ReplicaTimer(const DeviceProblem& device_problem, const KernelConfig& config,
                           const kernels::LaunchPlan& plan, std::span<void* const> workspaces,
                           cudaStream_t stream)
    : stream_(stream), replicas_(device_problem.replicas()) {
  if (workspaces.empty()) throw std::invalid_argument("ReplicaTimer: no instance");
  for (void* workspace : workspaces) {
    auto& graph = graphs_.emplace_back(std::make_unique<CudaGraph>());
    graph->capture(stream, [&](cudaStream_t capture_stream) {
      for (int r = 0; r < replicas_; ++r) {
        MLALAB_CUDA_TRY(
            kernels::launch(device_problem.params(r), config, plan, workspace, capture_stream)
                .error);
      }
    });
  }
  warm_up();
}

void ReplicaTimer::warm_up(int replays) const {
  for (const auto& graph : graphs_) {
    for (int replay = 0; replay < replays; ++replay) graph->replay(stream_);
  }
}

std::vector<double> ReplicaTimer::time_calls_us(int replays) {
  std::vector<double> calls_us;
  calls_us.reserve(replays);
  for (int replay = 0; replay < replays; ++replay) {
    const CudaGraph& graph = *graphs_[next_graph_];
    next_graph_ = (next_graph_ + 1) % graphs_.size();
    start_.record(stream_);
    graph.replay(stream_);
    stop_.record(stream_);
    calls_us.push_back(CudaEvent::elapsed_ms(start_, stop_) * kMicrosPerMilli / replicas_);
  }
  return calls_us;
}

}  // namespace mlalab::bench
