#include "ab/arms.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "ab/child_process.h"
#include "ab/sha256.h"
#include "bench/bench_runner.h"
#include "bench/check.h"
#include "bench/cuda_raii.h"
#include "bench/device_problem.h"
#include "bench/problem.h"
#include "core/median.h"
#include "dispatch/dispatcher.h"
#include "dispatch/feasibility.h"
#include "dispatch/tuning_table.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/registry.h"
#include "kernels/split_plan.h"

extern char** environ;

namespace mlalab::ab {
namespace {

constexpr double kMicrosPerSecond = 1e6;
constexpr const char* kShell = "/bin/sh";
// How often a running command is checked for the stop signal and its deadline.
constexpr int kCommandPollMs = 50;
// After the shell exits, how long its output pipes may stay open (a background child holding
// them) before they are abandoned.
constexpr double kDrainAfterExitS = 1.0;
constexpr std::size_t kReadChunkBytes = 64 * 1024;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

bench::ProblemSpec problem_spec(const PointWorkload& workload) {
  return bench::lab_problem_spec(workload.layout, workload.num_heads, workload.page_size,
                                 workload.context_lengths, workload.seed);
}

// batch / time: sequences per second; nullopt for a time that is not positive.
std::optional<double> throughput(int batch, double time_us) {
  if (!(time_us > 0) || !std::isfinite(time_us)) return std::nullopt;
  return batch / (time_us / kMicrosPerSecond);
}

Measurement from_time(int batch, double time_us) {
  Measurement measurement{.value = throughput(batch, time_us), .time_us = time_us};
  if (!measurement.value) measurement.failure = fmt::format("measured time {} us", time_us);
  return measurement;
}

// ---- CPU backend ----------------------------------------------------------------------------

class CpuArm final : public PreparedArm {
 public:
  CpuArm(bench::HostProblem& problem, int threads, int launches,
         const std::atomic<int>* stop_signal)
      : problem_(problem), threads_(threads), launches_(launches), stop_signal_(stop_signal) {}

  Measurement measure(const SampleLimits& limits) override {
    std::vector<double> times_us;
    times_us.reserve(launches_);
    for (int launch = 0; launch < launches_; ++launch) {
      if (stop_signal_ != nullptr && stop_signal_->load() != 0) {
        return Measurement{.failure = "stopped", .cut = SampleCut::kStopSignal};
      }
      const auto start = std::chrono::steady_clock::now();
      if (start >= limits.deadline) {
        return Measurement{.failure = "the run's budget ran out", .cut = SampleCut::kDeadline};
      }
      if (const auto error = kernels::run_cpu_backend(problem_.params(), threads_)) {
        return Measurement{.failure = error->message()};
      }
      times_us.push_back(seconds_since(start) * kMicrosPerSecond);
    }
    return from_time(problem_.spec.batch, median(std::move(times_us)));
  }

 private:
  bench::HostProblem& problem_;
  int threads_;
  int launches_;
  const std::atomic<int>* stop_signal_;
};

class CpuPoint final : public KernelPoint {
 public:
  CpuPoint(const PointWorkload& workload, const std::atomic<int>* stop_signal)
      : problem_(bench::make_problem(problem_spec(workload))),
        reference_(problem_, bench::validation_batch_indices(problem_.spec.batch)),
        launches_(workload.launches_per_sample),
        stop_signal_(stop_signal) {}

  Preparation prepare(const KernelArm& arm) override {
    const int threads = resolved_cpu_threads(arm.cpu_threads);
    Preparation preparation{.splits = 1};
    problem_.poison_outputs();
    if (const auto error = kernels::run_cpu_backend(problem_.params(), threads)) {
      preparation.invalid_reason = error->message();
      return preparation;
    }
    if (auto failure =
            bench::reference_mismatch(problem_, problem_.out, problem_.lse, reference_)) {
      preparation.invalid_reason = std::move(*failure);
      return preparation;
    }
    preparation.arm = std::make_unique<CpuArm>(problem_, threads, launches_, stop_signal_);
    return preparation;
  }

 private:
  bench::HostProblem problem_;
  bench::LazyReference reference_;
  int launches_;
  const std::atomic<int>* stop_signal_;
};

class CpuBackend final : public KernelBackend {
 public:
  explicit CpuBackend(const std::atomic<int>* stop_signal) : stop_signal_(stop_signal) {}
  std::string name() const override { return "cpu"; }
  std::unique_ptr<KernelPoint> begin_point(const PointWorkload& workload) override {
    return std::make_unique<CpuPoint>(workload, stop_signal_);
  }
  std::string code_hash(const KernelArm&) const override {
    return std::string(kernels::cpu_backend_code_hash());
  }

 private:
  const std::atomic<int>* stop_signal_;
};

// ---- CUDA backend ---------------------------------------------------------------------------

// The workspaces of one CUDA arm's instances: `instances` allocations of `bytes` each, or
// fewer where they would pass kMaxInstanceBytes (one at least); empty buffers (null) for a
// launch without a workspace.
constexpr std::size_t kMaxInstanceBytes = std::size_t{1} << 30;

std::vector<bench::DeviceBuffer<std::byte>> instance_workspaces(std::size_t bytes,
                                                                int instances) {
  const std::size_t fitting =
      bytes == 0 ? static_cast<std::size_t>(instances)
                 : std::clamp<std::size_t>(kMaxInstanceBytes / bytes, 1,
                                           static_cast<std::size_t>(instances));
  std::vector<bench::DeviceBuffer<std::byte>> workspaces;
  for (std::size_t i = 0; i < fitting; ++i) workspaces.emplace_back(bytes);
  return workspaces;
}

std::vector<void*> pointers(const std::vector<bench::DeviceBuffer<std::byte>>& workspaces) {
  std::vector<void*> result;
  for (auto& workspace : workspaces) result.push_back(workspace.data());
  return result;
}

class CudaArm final : public PreparedArm {
 public:
  CudaArm(std::vector<bench::DeviceBuffer<std::byte>> workspaces,
          const bench::DeviceProblem& device_problem, const KernelConfig& config,
          const kernels::LaunchPlan& plan, cudaStream_t stream, int batch, int launches)
      : workspaces_(std::move(workspaces)),
        timer_(device_problem, config, plan, pointers(workspaces_), stream),
        stream_(stream),
        batch_(batch),
        launches_(launches) {}
  CudaArm(const CudaArm&) = delete;
  CudaArm& operator=(const CudaArm&) = delete;
  // Replays still in flight (a warm-up when the run stops) must not outlive the graph and the
  // workspace they use. Errors are the run's to report, not a destructor's.
  ~CudaArm() override { cudaStreamSynchronize(stream_); }

  void warm_up() override { timer_.warm_up(); }

  // A sample is launches_per_sample graph replays of microseconds to milliseconds each: too
  // short to be worth cutting at the deadline, which the runner checks between samples.
  Measurement measure(const SampleLimits&) override {
    return from_time(batch_, median(timer_.time_calls_us(launches_)));
  }

 private:
  std::vector<bench::DeviceBuffer<std::byte>> workspaces_;  // before timer_: its graphs use them
  bench::ReplicaTimer timer_;
  cudaStream_t stream_;
  int batch_;
  int launches_;
};

class CudaPoint final : public KernelPoint {
 public:
  CudaPoint(const PointWorkload& workload, const bench::DeviceInfo& device, cudaStream_t stream)
      : host_(bench::make_problem(problem_spec(workload))),
        device_problem_(host_, device.l2_bytes),
        reference_(host_, bench::validation_batch_indices(host_.spec.batch)),
        device_(device),
        stream_(stream),
        launches_(workload.launches_per_sample),
        instances_(workload.instances_per_arm) {}

  Preparation prepare(const KernelArm& arm) override {
    Preparation preparation;
    KernelConfig config{.shape = {}, .split = arm.split};
    if (!arm.table.empty()) {
      // What a Dispatcher with this table would launch for this point's batch and its longest
      // context, if the table is for this GPU and build.
      const dispatch::TuningTable table = dispatch::read_table(arm.table);
      if (auto mismatch = dispatch::mismatch_here(table, table.identity.layout,
                                                  table.identity.num_heads,
                                                  table.identity.page_size)) {
        preparation.invalid_reason =
            fmt::format("the tuning table {} does not match: {}", arm.table, *mismatch);
        return preparation;
      }
      const dispatch::ResolvedLaunch resolved = dispatch::resolve_launch(
          table.identity.layout, table.identity.num_heads, table.identity.page_size, &table,
          {.batch = host_.spec.batch, .max_context = host_.max_seq_len()});
      config = resolved.config;
      preparation.resolved_config =
          fmt::format("{} {} ({})", variant_name(config.shape), config.split.to_string(),
                      resolved.source);
    } else if (const kernels::Variant* named = kernels::find_variant(arm.variant)) {
      config.shape = named->shape;
    } else {
      preparation.invalid_reason =
          fmt::format("variant {} is not compiled into this build", arm.variant);
      return preparation;
    }
    const dispatch::Placement placement = dispatch::judge_here(config.shape, host_.dims.d_qk);
    if (!placement.verdict.feasible) {
      preparation.invalid_reason = placement.verdict.reason;
      return preparation;
    }
    const kernels::LaunchPlan plan = kernels::plan_launch(
        device_problem_.params(0), config, host_.max_seq_len(), placement.slots(device_.sm_count));
    preparation.splits = plan.num_splits;
    preparation.workers = plan.workers;
    std::vector<bench::DeviceBuffer<std::byte>> workspaces =
        instance_workspaces(plan.workspace_bytes, instances_);
    if (auto failure = bench::validate_on_device(host_, device_problem_, config, plan,
                                                 workspaces.front().data(), stream_,
                                                 reference_)) {
      preparation.invalid_reason = std::move(*failure);
      return preparation;
    }
    preparation.instances = static_cast<int>(workspaces.size());
    preparation.arm = std::make_unique<CudaArm>(std::move(workspaces), device_problem_, config,
                                                plan, stream_, host_.spec.batch, launches_);
    return preparation;
  }

 private:
  bench::HostProblem host_;
  bench::DeviceProblem device_problem_;
  bench::LazyReference reference_;
  const bench::DeviceInfo& device_;
  cudaStream_t stream_;
  int launches_;
  int instances_;
};

class CudaBackend final : public KernelBackend {
 public:
  explicit CudaBackend(const bench::DeviceInfo& device) : device_(device) {}

  std::string name() const override { return "cuda"; }
  std::unique_ptr<KernelPoint> begin_point(const PointWorkload& workload) override {
    return std::make_unique<CudaPoint>(workload, device_, stream_.get());
  }
  // A faulting kernel poisons the context for good: later work could only fail.
  bool usable() const override { return cudaDeviceSynchronize() == cudaSuccess; }
  std::string code_hash(const KernelArm& arm) const override { return cuda_code_hash(arm); }

 private:
  bench::DeviceInfo device_;
  bench::CudaStream stream_;
};

// ---- Command arms ---------------------------------------------------------------------------

std::string trimmed(std::string_view text) {
  const auto is_space = [](unsigned char c) { return std::isspace(c) != 0; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return std::string(text);
}

std::string last_line(const std::string& text) {
  const std::string body = trimmed(text);
  const auto newline = body.find_last_of('\n');
  return newline == std::string::npos ? body : body.substr(newline + 1);
}

std::string describe_failure(const CommandResult& result, double timeout_s) {
  if (!result.spawn_error.empty()) return "could not start: " + result.spawn_error;
  std::string text;
  if (result.timed_out) {
    text = fmt::format("timed out after {:g} s", timeout_s);
  } else if (result.term_signal != 0) {
    text = fmt::format("killed by signal {}", result.term_signal);
  } else {
    text = fmt::format("exit status {}", result.exit_status);
  }
  const std::string error = last_line(result.error_tail);
  if (!error.empty()) text += fmt::format(" (stderr: {})", error);
  return text;
}

class CommandRunArm final : public PreparedArm {
 public:
  CommandRunArm(const CommandArm& arm, std::regex pattern, int concurrency,
                const std::atomic<int>* stop_signal)
      : arm_(arm), pattern_(std::move(pattern)), env_(arm.env), stop_signal_(stop_signal) {
    env_[kConcurrencyEnvVar] = std::to_string(concurrency);
  }

  Measurement measure(const SampleLimits& limits) override {
    // The run's deadline, when it comes first, bounds the command like its own timeout.
    const double until_deadline_s =
        std::chrono::duration<double>(limits.deadline - std::chrono::steady_clock::now()).count();
    const bool deadline_first = until_deadline_s < arm_.timeout_s;
    const CommandResult result =
        run_shell_command(arm_.command, env_, deadline_first ? std::max(0.0, until_deadline_s)
                                                             : arm_.timeout_s,
                          stop_signal_);
    if (result.interrupted) return Measurement{.failure = "stopped", .cut = SampleCut::kStopSignal};
    if (result.timed_out && deadline_first) {
      return Measurement{.failure = "the run's budget ran out", .cut = SampleCut::kDeadline};
    }
    if (!result.spawn_error.empty() || result.timed_out || result.exit_status != 0) {
      return Measurement{.failure = describe_failure(result, arm_.timeout_s)};
    }
    std::string failure;
    const auto value = extract_metric(result, pattern_, &failure);
    if (!value) return Measurement{.failure = std::move(failure)};
    return Measurement{.value = value};
  }

 private:
  CommandArm arm_;
  std::regex pattern_;
  std::map<std::string, std::string> env_;
  const std::atomic<int>* stop_signal_;
};

}  // namespace

int resolved_cpu_threads(int requested) {
  if (requested > 0) return requested;
  return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

std::unique_ptr<KernelBackend> make_cpu_backend(const std::atomic<int>* stop_signal) {
  return std::make_unique<CpuBackend>(stop_signal);
}

std::unique_ptr<KernelBackend> make_cuda_backend(const bench::DeviceInfo& device) {
  return std::make_unique<CudaBackend>(device);
}

std::string cuda_code_hash(const KernelArm& arm, CodeHashForm form) {
  const auto hash_of = [form](const kernels::Variant* variant) {
    if (variant == nullptr) return std::string();
    return form == CodeHashForm::kWithNames ? variant->code_hash_with_names : variant->code_hash;
  };
  if (!arm.table.empty()) {
    std::string hashes;
    for (const auto& candidate : dispatch::read_table(arm.table).identity.candidates) {
      hashes += candidate.variant + "=" + hash_of(kernels::find_variant(candidate.variant)) + "\n";
    }
    return sha256_hex(hashes);
  }
  return hash_of(kernels::find_variant(arm.variant));
}

CommandResult run_shell_command(const std::string& command,
                                const std::map<std::string, std::string>& env, double timeout_s,
                                const std::atomic<int>* stop_signal) {
  CommandResult result;
  const auto start = std::chrono::steady_clock::now();

  std::array<int, 2> out_pipe{-1, -1};
  std::array<int, 2> err_pipe{-1, -1};
  if (pipe2(out_pipe.data(), O_CLOEXEC) != 0) {
    result.spawn_error = errno_text("pipe", errno);
    return result;
  }
  Fd out_read(out_pipe[0]);
  Fd out_write(out_pipe[1]);
  if (pipe2(err_pipe.data(), O_CLOEXEC) != 0) {
    result.spawn_error = errno_text("pipe", errno);
    return result;
  }
  Fd err_read(err_pipe[0]);
  Fd err_write(err_pipe[1]);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, out_write.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&actions, err_write.get(), STDERR_FILENO);
  pid_t pid = -1;
  const int spawn_status = spawn_in_own_group(kShell, {kShell, "-c", command},
                                              child_environment(env), &actions, &pid);
  posix_spawn_file_actions_destroy(&actions);
  if (spawn_status != 0) {
    result.spawn_error = errno_text(kShell, spawn_status);
    return result;
  }
  out_write.reset();
  err_write.reset();

  // The shell's exit is detected without reaping it (WNOWAIT): while it is a zombie its pid,
  // and so its process group id, cannot be reused, and the group can be killed safely.
  const auto has_exited = [pid] {
    siginfo_t info{};
    return waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 &&
           info.si_pid == pid;
  };
  std::optional<std::chrono::steady_clock::time_point> exited_at;
  bool out_open = true;
  bool err_open = true;
  bool killed = false;
  const auto check_deadlines = [&] {
    if (killed) return;
    if (stop_signal != nullptr && stop_signal->load() != 0) result.interrupted = true;
    if (seconds_since(start) > timeout_s) result.timed_out = !result.interrupted;
    if (result.interrupted || result.timed_out) {
      kill(-pid, SIGKILL);
      killed = true;
    }
  };
  std::array<char, kReadChunkBytes> chunk{};
  while (out_open || err_open) {
    check_deadlines();
    if (!exited_at && has_exited()) exited_at = std::chrono::steady_clock::now();
    if (exited_at && seconds_since(*exited_at) > kDrainAfterExitS) break;

    // A negative fd is skipped by poll: a stream already at its end.
    std::array<pollfd, 2> fds = {
        pollfd{.fd = out_open ? out_read.get() : -1, .events = POLLIN, .revents = 0},
        pollfd{.fd = err_open ? err_read.get() : -1, .events = POLLIN, .revents = 0}};
    const int ready = poll(fds.data(), fds.size(), kCommandPollMs);
    if (ready < 0 && errno != EINTR) break;
    if (ready <= 0) continue;
    for (int stream = 0; stream < 2; ++stream) {
      if (fds[stream].revents == 0) continue;
      const ssize_t count = read(fds[stream].fd, chunk.data(), chunk.size());
      if (count < 0 && errno == EINTR) continue;
      if (count <= 0) {
        (stream == 0 ? out_open : err_open) = false;
        continue;
      }
      if (stream == 0) {
        const std::size_t room = kMaxCommandOutputBytes - std::min(kMaxCommandOutputBytes,
                                                                   result.output.size());
        result.output.append(chunk.data(), std::min(room, static_cast<std::size_t>(count)));
      } else {
        result.error_tail.append(chunk.data(), static_cast<std::size_t>(count));
        if (result.error_tail.size() > kCommandErrorTailBytes) {
          result.error_tail.erase(0, result.error_tail.size() - kCommandErrorTailBytes);
        }
      }
    }
  }
  // The pipes closed before the shell exited: it exits now, unless it is stuck, which the
  // deadline or the stop signal ends.
  // Usually it is a matter of microseconds, so the wait starts short and backs off.
  for (auto wait = std::chrono::milliseconds(1); !has_exited();
       wait = std::min(2 * wait, std::chrono::milliseconds(kCommandPollMs))) {
    check_deadlines();
    std::this_thread::sleep_for(wait);
  }
  // Whatever the shell left running in its group goes with it; then the shell is reaped.
  kill(-pid, SIGKILL);
  int wait_status = 0;
  while (waitpid(pid, &wait_status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(wait_status)) result.exit_status = WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) result.term_signal = WTERMSIG(wait_status);
  result.seconds = seconds_since(start);
  return result;
}

std::optional<double> extract_metric(const CommandResult& result, const std::regex& pattern,
                                     std::string* failure) {
  const std::string& output = result.output;
  std::smatch match;
  if (!std::regex_search(output, match, pattern)) {
    const std::string last = last_line(output);
    const std::string error = last_line(result.error_tail);
    if (!last.empty()) {
      *failure = fmt::format("metric matched nothing on stdout (its last line: {})", last);
    } else if (!error.empty()) {
      // A benchmark that logs to stderr: the number may well be there, but the metric is
      // read from stdout only.
      *failure = fmt::format("stdout was empty, and the metric is read from stdout; stderr "
                             "ended with: {} (redirect with 2>&1 if the number is there)",
                             error);
    } else {
      *failure = "metric matched nothing: stdout and stderr were both empty";
    }
    return std::nullopt;
  }
  if (match.size() < 2 || !match[1].matched) {
    *failure = "metric matched on stdout, but its first capture group did not";
    return std::nullopt;
  }
  std::string text = trimmed(match[1].str());
  std::string_view digits = text;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  double value = 0.0;
  const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  if (digits.empty() || ec != std::errc{} || end != digits.data() + digits.size()) {
    *failure = fmt::format("the metric '{}' is not a number", text);
    return std::nullopt;
  }
  if (!(std::isfinite(value) && value > 0)) {
    *failure = fmt::format("the metric {} is not a positive finite number", text);
    return std::nullopt;
  }
  return value;
}

Preparation prepare_command_arm(const CommandArm& arm, int concurrency,
                                const std::atomic<int>* stop_signal) {
  Preparation preparation;
  std::regex pattern;
  try {
    pattern = std::regex(arm.metric_regex, std::regex::ECMAScript);
  } catch (const std::regex_error& error) {
    preparation.invalid_reason =
        fmt::format("metric '{}' does not compile: {}", arm.metric_regex, error.what());
    return preparation;
  }
  if (pattern.mark_count() < 1) {
    preparation.invalid_reason =
        fmt::format("metric '{}' has no capture group for the number", arm.metric_regex);
    return preparation;
  }
  if (!(arm.timeout_s > 0)) {
    preparation.invalid_reason = fmt::format("timeout_s {} is not > 0", arm.timeout_s);
    return preparation;
  }
  preparation.arm =
      std::make_unique<CommandRunArm>(arm, std::move(pattern), concurrency, stop_signal);
  return preparation;
}

}  // namespace mlalab::ab
