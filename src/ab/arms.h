#pragma once
// The arm executors of the A/B lab: what prepares one arm at one sweep point and takes its
// samples. The runner (runner.h) decides when and in which order; these decide how.
//
// Kernel arms. All kernel arms at a sweep point share one workload (KernelPoint): the problem,
// its fp64 reference and, on the GPU, the replicas of its inputs, since the arms differ only
// in the kernel config. prepare() checks the arm against the reference first (one call on
// poisoned outputs); an arm that fails is INVALID and never timed. Then:
//   cuda  the arm gets its own CUDA graph of one call per replica (bench/device_problem.h,
//         as `mlalab bench` times a variant); a sample is the median over
//         launches_per_sample replays of replay time / replicas. With instances_per_arm
//         above 1 the arm gets that many graphs, each with its own workspace, replayed in
//         turn: what one instance costs is a fixed offset of up to ±1 % (ReplicaTimer), which
//         paired rounds cannot average out but several instances per arm do;
//   cpu   a sample is the median of launches_per_sample runs of the CPU backend, timed with
//         std::chrono::steady_clock.
// The sample's value is the throughput: batch / time, in sequences per second.
//
// Command arms. One sample is one run of the command through /bin/sh -c, in its own process
// group, with the arm's environment overrides and MLALAB_CONCURRENCY; its stdout is searched
// with the arm's regex and the first capture group is the sample.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include "ab/experiment.h"
#include "bench/device_info.h"
#include "core/layout.h"

namespace mlalab::ab {

// Why a sample was cut short. A cut sample is neither a value nor a failure of the arm: what
// it measured is discarded.
enum class SampleCut {
  kNone,
  kStopSignal,  // the stop signal was raised (Ctrl-C): a running command is killed
  kDeadline,    // the run's budget ran out: a running command is killed
};

// What one sample of one arm gave.
struct Measurement {
  std::optional<double> value{};  // the metric; nullopt when the sample failed or was cut
  double time_us = 0.0;           // kernel arms: the sample's median call time
  std::string failure{};          // why there is no value
  SampleCut cut = SampleCut::kNone;
};

// What bounds one sample: the run's budget ends at `deadline`, and a sample still running then
// is cut (SampleCut::kDeadline), so that the budget bounds the whole run.
struct SampleLimits {
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

// One arm, prepared at one sweep point.
class PreparedArm {
 public:
  virtual ~PreparedArm() = default;
  // Brings the clocks up after a pause (before a point's first round); not timed.
  virtual void warm_up() {}
  virtual Measurement measure(const SampleLimits& limits) = 0;
};

// The problem of one sweep point, as kernel arms see it.
struct PointWorkload {
  Layout layout = Layout::kV4;
  int num_heads = 16;
  int page_size = 64;
  std::vector<int> context_lengths;  // one per request: the batch is their count
  std::uint64_t seed = 1;            // of the random inputs and the page order
  int launches_per_sample = 1;
  int instances_per_arm = 1;         // MeasureSettings::instances_per_arm
};

struct Preparation {
  std::unique_ptr<PreparedArm> arm{};  // null when the arm is INVALID here
  std::string invalid_reason{};
  int splits = 0;                    // KV splits of the arm's plan (1 on the CPU)
  int workers = 0;                   // a balanced plan's workers per head block; 0 otherwise
  // The instances a CUDA arm's replays take in turn (fewer than asked where their workspaces
  // would pass kMaxInstanceBytes); 0 for other backends; -1 from a worker of a build that
  // predates instances (one each).
  int instances = 0;
  // A tuned arm's config here, and where it came from: "h16_t16_w4_s2 fixed:6 (table: entry
  // batch 64, context 4096)"; a Python arm's launcher's own line, if it has one; empty for
  // other arms.
  std::string resolved_config{};
  // A Python arm's binary hash: the SHA-256 over the Triton kernels it has compiled so far in
  // its worker (python/mlalab/worker.py); empty for other arms and where none are known.
  std::string binary_hash{};
};

// The kernel arms' shared workload at one sweep point. It must outlive the arms it prepares.
class KernelPoint {
 public:
  virtual ~KernelPoint() = default;
  // Checks the arm against the reference at this point, then prepares its timing. Throws on
  // a failure of the harness (out of memory, a lost CUDA context), not of the arm.
  virtual Preparation prepare(const KernelArm& arm) = 0;
};

class KernelBackend {
 public:
  virtual ~KernelBackend() = default;
  virtual std::string name() const = 0;  // "cuda" or "cpu"
  // Builds the point's problem (and its device copy); throws when it cannot.
  virtual std::unique_ptr<KernelPoint> begin_point(const PointWorkload& workload) = 0;
  // False once the backend cannot go on (the CUDA context was lost to a faulting kernel).
  virtual bool usable() const { return true; }
  // The arm's code hash: the SHA-256 of the variant's SASS (cuda) or of the CPU backend's
  // machine code (cpu); empty if none.
  virtual std::string code_hash(const KernelArm& arm) const = 0;
};

// The CPU backend (kernels/cpu): every kernel arm runs it, with the arm's thread count. A
// sample of many calls checks *stop_signal and its deadline between calls, so that a long
// sample (seconds per call at large contexts) is cut within one call.
std::unique_ptr<KernelBackend> make_cpu_backend(const std::atomic<int>* stop_signal = nullptr);
// The CUDA backend on the current device. Throws bench::CudaError when the device is unusable.
std::unique_ptr<KernelBackend> make_cuda_backend(const bench::DeviceInfo& device);

// The code hash of a kernel arm this build runs on the GPU (KernelBackend::code_hash of the
// CUDA backend, which needs no GPU): its variant's, or a tuned arm's, which is every candidate
// its table chose among: the hash of their hashes. Empty for a variant not compiled here.
// kWithNames: in the form recorded before 2026-12-06 (kernels::VariantCodeHashes), for
// `mlalab verify` of older records. A tuned arm's table that cannot be read throws.
enum class CodeHashForm { kCurrent, kWithNames };
std::string cuda_code_hash(const KernelArm& arm, CodeHashForm form = CodeHashForm::kCurrent);

// Threads the CPU backend uses for a requested count (0 = every hardware thread).
int resolved_cpu_threads(int requested);

// ---- Command arms ---------------------------------------------------------------------------

// How one run of a shell command ended.
struct CommandResult {
  std::string output;       // stdout, up to kMaxCommandOutputBytes
  std::string error_tail;   // the last kCommandErrorTailBytes of stderr
  int exit_status = -1;     // the exit status when it exited; -1 otherwise
  int term_signal = 0;      // the signal that ended it, if one did
  bool timed_out = false;
  bool interrupted = false;  // the stop signal was raised; the command was killed
  std::string spawn_error;   // non-empty when it could not be started
  double seconds = 0.0;
};

constexpr std::size_t kMaxCommandOutputBytes = std::size_t{16} << 20;
constexpr std::size_t kCommandErrorTailBytes = 2048;

// Runs `command` through /bin/sh -c in its own process group, stdin from /dev/null, with the
// environment of this process plus `env` (which overrides). Kills the whole group on timeout
// or when *stop_signal becomes nonzero (polled every few tens of ms).
CommandResult run_shell_command(const std::string& command,
                                const std::map<std::string, std::string>& env, double timeout_s,
                                const std::atomic<int>* stop_signal = nullptr);

// The first capture group of `pattern`'s first match in the command's stdout, as a positive
// finite number; nullopt with the reason in *failure otherwise (saying where it looked, and
// what stderr had when stdout had nothing).
std::optional<double> extract_metric(const CommandResult& result, const std::regex& pattern,
                                     std::string* failure);

// A command arm at a sweep point (MLALAB_CONCURRENCY = concurrency). The arm is INVALID (null
// arm, reason set) when its metric regex does not compile or has no capture group. A sample
// runs for at most the arm's timeout_s and never past the deadline of its SampleLimits.
Preparation prepare_command_arm(const CommandArm& arm, int concurrency,
                                const std::atomic<int>* stop_signal);

}  // namespace mlalab::ab
