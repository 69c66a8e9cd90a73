#include "ab/worker.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <istream>
#include <nlohmann/json.hpp>
#include <mutex>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <thread>
#include <utility>
#include <vector>

#include "ab/child_process.h"
#include "bench/device_info.h"

namespace mlalab::ab {
namespace {

using Json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int kPollMs = 50;
constexpr double kExitGraceS = 2.0;  // for a worker to leave after its input ends

// ---- The messages ---------------------------------------------------------------------------

Json workload_json(const PointWorkload& workload) {
  return {{"layout", name_of(workload.layout)},
          {"heads", workload.num_heads},
          {"page_size", workload.page_size},
          {"context_lengths", workload.context_lengths},
          {"seed", workload.seed},
          {"launches_per_sample", workload.launches_per_sample},
          {"instances_per_arm", workload.instances_per_arm}};
}

PointWorkload workload_from_json(const Json& json) {
  const auto layout = parse_layout(json.at("layout").get<std::string>());
  if (!layout) throw std::invalid_argument("workload: unknown layout");
  return PointWorkload{.layout = *layout,
                       .num_heads = json.at("heads").get<int>(),
                       .page_size = json.at("page_size").get<int>(),
                       .context_lengths = json.at("context_lengths").get<std::vector<int>>(),
                       .seed = json.at("seed").get<std::uint64_t>(),
                       .launches_per_sample = json.at("launches_per_sample").get<int>(),
                       .instances_per_arm = json.value("instances_per_arm", 1)};
}

// The arm as its worker runs it: a Python arm's callable and params, or a kernel arm without
// the build that names the worker.
Json arm_json(const KernelArm& arm) {
  if (!arm.python.empty()) return {{"python", arm.python}, {"params", Json::parse(arm.params)}};
  return {{"variant", arm.variant},
          {"split", arm.split.to_string()},
          {"table", arm.table},
          {"cpu_threads", arm.cpu_threads}};
}

KernelArm arm_from_json(const Json& json) {
  std::string error;
  const auto split = parse_split_policy(json.at("split").get<std::string>(), &error);
  if (!split) throw std::invalid_argument("arm: split: " + error);
  return KernelArm{.variant = json.at("variant").get<std::string>(),
                   .split = *split,
                   .table = json.at("table").get<std::string>(),
                   .cpu_threads = json.at("cpu_threads").get<int>()};
}

// ---- The worker's side ----------------------------------------------------------------------

class WorkerState {
 public:
  explicit WorkerState(KernelBackend& backend) : backend_(backend) {}

  Json answer(const Json& request) {
    const std::string op = request.at("op").get<std::string>();
    if (op == "hello") {
      return {{"ok", true},
              {"protocol", kWorkerProtocol},
              {"commit", bench::git_commit()},
              {"backend", backend_.name()}};
    }
    if (op == "begin_point") {
      arms_.clear();   // they refer to the point
      point_.reset();  // a point that fails to build leaves none, not the previous one
      point_ = backend_.begin_point(workload_from_json(request.at("workload")));
      return {{"ok", true}};
    }
    if (op == "code_hash") {
      return {{"ok", true}, {"code_hash", backend_.code_hash(arm_from_json(request.at("arm")))}};
    }
    if (op == "prepare") {
      if (!point_) throw std::invalid_argument("prepare before begin_point");
      Preparation preparation = point_->prepare(arm_from_json(request.at("arm")));
      Json reply = {{"ok", true},
                    {"splits", preparation.splits},
                    {"workers", preparation.workers},
                    {"instances", preparation.instances},
                    {"resolved_config", preparation.resolved_config}};
      if (preparation.arm) {
        reply["arm"] = arms_.size();
        arms_.push_back(std::move(preparation.arm));
      } else {
        reply["arm"] = nullptr;
        reply["invalid_reason"] = preparation.invalid_reason;
      }
      return reply;
    }
    if (op != "warm_up" && op != "sample") {
      throw std::invalid_argument(fmt::format("unknown op '{}'", op));
    }
    PreparedArm& arm = prepared(request.at("arm").get<std::size_t>());
    if (op == "warm_up") {
      arm.warm_up();
      return {{"ok", true}};
    }
    const Measurement measurement = arm.measure(SampleLimits{});
    return {{"ok", true},
            {"value", measurement.value ? Json(*measurement.value) : Json(nullptr)},
            {"time_us", measurement.time_us},
            {"failure", measurement.failure}};
  }

 private:
  PreparedArm& prepared(std::size_t index) {
    if (index >= arms_.size()) throw std::invalid_argument("no such prepared arm");
    return *arms_[index];
  }

  KernelBackend& backend_;
  std::unique_ptr<KernelPoint> point_;
  std::vector<std::unique_ptr<PreparedArm>> arms_;
};

// ---- The lab's side -------------------------------------------------------------------------

// A reply, or why there is none: the call was cut (stop signal, deadline), which killed the
// worker.
struct Reply {
  std::optional<Json> body;
  SampleCut cut = SampleCut::kNone;
};

// A worker's stderr, relayed line by line to this process's stderr behind the worker's label
// (unmarked, a worker's warnings read as the lab's own), its last lines kept for the message
// that reports the worker's end.
class StderrRelay {
 public:
  StderrRelay(std::string label, int read_end)
      : label_(std::move(label)), read_end_(read_end), thread_([this] { relay(); }) {}
  StderrRelay(const StderrRelay&) = delete;
  StderrRelay& operator=(const StderrRelay&) = delete;
  ~StderrRelay() { finish(); }

  // Relays what is left once the worker has ended: until its stderr closes, or after
  // kExitGraceS (a process it left behind may hold the pipe open).
  void finish() {
    if (!thread_.joinable()) return;
    deadline_.store(Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                       std::chrono::duration<double>(kExitGraceS)));
    thread_.join();
  }

  // The last lines, for an error message: "" when there were none.
  std::string tail() const {
    const std::lock_guard lock(mutex_);
    std::string text;
    for (const std::string& line : last_lines_) text += (text.empty() ? "" : " | ") + line;
    return text;
  }

 private:
  static constexpr std::size_t kTailLines = 4;

  void relay() {
    std::array<char, 4096> chunk{};
    std::string pending;
    for (;;) {
      if (Clock::now() >= deadline_.load()) break;
      pollfd descriptor{.fd = read_end_.get(), .events = POLLIN, .revents = 0};
      const int ready = poll(&descriptor, 1, kPollMs);
      if (ready < 0 && errno != EINTR) break;
      if (ready <= 0) continue;
      const ssize_t count = read(read_end_.get(), chunk.data(), chunk.size());
      if (count < 0 && errno == EINTR) continue;
      if (count <= 0) break;  // closed: the worker and everything it started have ended
      pending.append(chunk.data(), static_cast<std::size_t>(count));
      for (std::size_t newline; (newline = pending.find('\n')) != std::string::npos;) {
        emit(pending.substr(0, newline));
        pending.erase(0, newline + 1);
      }
    }
    if (!pending.empty()) emit(pending);
  }

  void emit(const std::string& line) {
    fmt::print(stderr, "[worker of {}] {}\n", label_, line);
    const std::lock_guard lock(mutex_);
    last_lines_.push_back(line);
    if (last_lines_.size() > kTailLines) last_lines_.pop_front();
  }

  std::string label_;
  Fd read_end_;
  std::atomic<Clock::time_point> deadline_{Clock::time_point::max()};
  mutable std::mutex mutex_;
  std::deque<std::string> last_lines_;
  std::thread thread_;  // last: it starts once the rest is built
};

// A worker (`mlalab worker --backend B` of another build, or the Python worker), its stdin and
// stdout one socket (a write to a worker that has died fails with EPIPE instead of raising
// SIGPIPE), its stderr relayed (StderrRelay). `label` names it in messages.
class WorkerProcess {
 public:
  WorkerProcess(std::string label, const std::string& program, std::vector<std::string> argv)
      : build_(std::move(label)) {
    std::array<int, 2> sockets{-1, -1};
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets.data()) != 0) {
      throw std::runtime_error(errno_text("socketpair", errno));
    }
    socket_ = std::make_unique<Fd>(sockets[0]);
    Fd child_end(sockets[1]);
    std::array<int, 2> stderr_pipe{-1, -1};
    if (pipe2(stderr_pipe.data(), O_CLOEXEC) != 0) {
      throw std::runtime_error(errno_text("pipe", errno));
    }
    Fd stderr_read(stderr_pipe[0]);
    const Fd stderr_write(stderr_pipe[1]);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, child_end.get(), STDIN_FILENO);
    posix_spawn_file_actions_adddup2(&actions, child_end.get(), STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, stderr_write.get(), STDERR_FILENO);
    const int status =
        spawn_in_own_group(program, std::move(argv), child_environment({}), &actions, &pid_);
    posix_spawn_file_actions_destroy(&actions);
    if (status != 0) {
      pid_ = -1;
      throw std::runtime_error(errno_text(program.c_str(), status));
    }
    const int read_end = stderr_read.get();
    stderr_read.release();
    stderr_ = std::make_unique<StderrRelay>(build_, read_end);
  }

  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  ~WorkerProcess() {
    socket_.reset();  // the worker's input ends: it leaves
    const auto start = Clock::now();
    while (pid_ > 0 && std::chrono::duration<double>(Clock::now() - start).count() < kExitGraceS) {
      if (waitpid(pid_, nullptr, WNOHANG) == pid_) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(kPollMs));
    }
    end_worker();
  }

  bool alive() const { return pid_ > 0; }

  // Sends `request` and waits for its reply. Throws std::runtime_error when the worker is gone,
  // its reply is not JSON, or it says ok:false.
  Reply call(const Json& request, Clock::time_point deadline = Clock::time_point::max(),
             const std::atomic<int>* stop_signal = nullptr) {
    if (!alive()) throw std::runtime_error(fmt::format("the worker of {} has ended", build_));
    const std::string line = request.dump() + "\n";
    for (std::size_t sent = 0; sent < line.size();) {
      const ssize_t count =
          send(socket_->get(), line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
      if (count < 0 && errno == EINTR) continue;
      if (count <= 0) fail(errno_text("write", errno));
      sent += static_cast<std::size_t>(count);
    }
    std::array<char, 4096> chunk{};
    for (;;) {
      if (const auto newline = buffer_.find('\n'); newline != std::string::npos) {
        const std::string text = buffer_.substr(0, newline);
        buffer_.erase(0, newline + 1);
        Json reply = Json::parse(text, nullptr, false);
        if (reply.is_discarded()) fail(fmt::format("a reply that is not JSON: '{}'", text));
        if (!reply.value("ok", false)) {
          throw std::runtime_error(fmt::format("the worker of {}: {}", build_,
                                               reply.value("error", std::string("no reason"))));
        }
        return Reply{.body = std::move(reply)};
      }
      if (stop_signal != nullptr && stop_signal->load() != 0) return cut(SampleCut::kStopSignal);
      if (Clock::now() >= deadline) return cut(SampleCut::kDeadline);
      pollfd descriptor{.fd = socket_->get(), .events = POLLIN, .revents = 0};
      const int ready = poll(&descriptor, 1, kPollMs);
      if (ready < 0 && errno != EINTR) fail(errno_text("poll", errno));
      if (ready <= 0) continue;
      const ssize_t count = recv(socket_->get(), chunk.data(), chunk.size(), 0);
      if (count < 0 && errno == EINTR) continue;
      if (count <= 0) fail("it ended");
      buffer_.append(chunk.data(), static_cast<std::size_t>(count));
    }
  }

 private:
  // Ends the worker and throws `why`, with the worker's last stderr lines when it wrote any.
  [[noreturn]] void fail(const std::string& why) {
    end_worker();
    stderr_->finish();
    const std::string last_words = stderr_->tail();
    throw std::runtime_error(
        last_words.empty()
            ? fmt::format("the worker of {}: {}", build_, why)
            : fmt::format("the worker of {}: {}; its stderr ended with: {}", build_, why,
                          last_words));
  }

  Reply cut(SampleCut why) {
    end_worker();
    return Reply{.body = std::nullopt, .cut = why};
  }

  void end_worker() {
    if (pid_ <= 0) return;
    kill(-pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

  std::string build_;
  std::unique_ptr<Fd> socket_;
  pid_t pid_ = -1;
  std::string buffer_;
  std::unique_ptr<StderrRelay> stderr_;
};

class WorkerArm final : public PreparedArm {
 public:
  WorkerArm(std::shared_ptr<WorkerProcess> process, int index, const std::atomic<int>* stop_signal)
      : process_(std::move(process)), index_(index), stop_signal_(stop_signal) {}

  void warm_up() override { process_->call({{"op", "warm_up"}, {"arm", index_}}); }

  Measurement measure(const SampleLimits& limits) override {
    Reply reply;
    try {
      reply = process_->call({{"op", "sample"}, {"arm", index_}}, limits.deadline, stop_signal_);
    } catch (const std::exception& error) {
      return Measurement{.failure = error.what()};
    }
    if (reply.cut == SampleCut::kStopSignal) {
      return Measurement{.failure = "stopped", .cut = SampleCut::kStopSignal};
    }
    if (reply.cut == SampleCut::kDeadline) {
      return Measurement{.failure = "the run's budget ran out", .cut = SampleCut::kDeadline};
    }
    const Json& body = *reply.body;
    Measurement measurement{.time_us = body.at("time_us").get<double>(),
                            .failure = body.at("failure").get<std::string>()};
    if (!body.at("value").is_null()) measurement.value = body.at("value").get<double>();
    return measurement;
  }

 private:
  std::shared_ptr<WorkerProcess> process_;
  int index_;
  const std::atomic<int>* stop_signal_;
};

class WorkerPoint final : public KernelPoint {
 public:
  WorkerPoint(std::shared_ptr<WorkerProcess> process, const std::atomic<int>* stop_signal)
      : process_(std::move(process)), stop_signal_(stop_signal) {}

  Preparation prepare(const KernelArm& arm) override {
    const Json body = *process_->call({{"op", "prepare"}, {"arm", arm_json(arm)}}).body;
    Preparation preparation{.splits = body.at("splits").get<int>(),
                            .workers = body.at("workers").get<int>(),
                            .instances = body.value("instances", -1),
                            .resolved_config = body.at("resolved_config").get<std::string>(),
                            .binary_hash = body.value("binary_hash", std::string{})};
    if (body.at("arm").is_null()) {
      preparation.invalid_reason = body.at("invalid_reason").get<std::string>();
    } else {
      preparation.arm =
          std::make_unique<WorkerArm>(process_, body.at("arm").get<int>(), stop_signal_);
    }
    return preparation;
  }

 private:
  std::shared_ptr<WorkerProcess> process_;
  const std::atomic<int>* stop_signal_;
};

class WorkerBackend final : public KernelBackend {
 public:
  WorkerBackend(const std::string& build, const std::string& program,
                std::vector<std::string> argv, Backend backend,
                const std::atomic<int>* stop_signal)
      : process_(std::make_shared<WorkerProcess>(build, program, std::move(argv))),
        stop_signal_(stop_signal) {
    const Json hello = *process_->call({{"op", "hello"}}).body;
    if (hello.value("protocol", 0) != kWorkerProtocol) {
      throw std::runtime_error(fmt::format("the worker of {} speaks protocol {}, this build {}",
                                           build, hello.value("protocol", 0), kWorkerProtocol));
    }
    name_ = hello.value("backend", std::string());
    if (name_ != backend_name(backend)) {
      throw std::runtime_error(fmt::format("the worker of {} runs backend '{}', not '{}'", build,
                                           name_, backend_name(backend)));
    }
  }

  std::string name() const override { return name_; }

  std::unique_ptr<KernelPoint> begin_point(const PointWorkload& workload) override {
    process_->call({{"op", "begin_point"}, {"workload", workload_json(workload)}});
    return std::make_unique<WorkerPoint>(process_, stop_signal_);
  }

  bool usable() const override { return process_->alive(); }

  std::string code_hash(const KernelArm& arm) const override {
    try {
      return process_->call({{"op", "code_hash"}, {"arm", arm_json(arm)}})
          .body->at("code_hash")
          .get<std::string>();
    } catch (const std::exception&) {
      return {};
    }
  }

 private:
  std::shared_ptr<WorkerProcess> process_;
  const std::atomic<int>* stop_signal_;
  std::string name_;
};

}  // namespace

void serve_worker(KernelBackend& backend, std::istream& in, std::ostream& out) {
  WorkerState state(backend);
  std::string line;
  while (std::getline(in, line)) {
    Json reply;
    try {
      reply = state.answer(Json::parse(line));
    } catch (const std::exception& error) {
      reply = {{"ok", false}, {"error", error.what()}};
    }
    out << reply.dump() << '\n' << std::flush;
  }
}

std::unique_ptr<KernelBackend> make_worker_backend(const std::string& build_path, Backend backend,
                                                   const std::atomic<int>* stop_signal) {
  std::vector<std::string> argv{build_path, "worker", "--backend",
                                std::string(backend_name(backend))};
  return std::make_unique<WorkerBackend>(build_path, build_path, std::move(argv), backend,
                                         stop_signal);
}

std::unique_ptr<KernelBackend> make_python_worker_backend(Backend backend,
                                                          const std::atomic<int>* stop_signal) {
  const char* python = std::getenv(kPythonEnvVar);
  // env finds the interpreter on PATH (posix_spawn takes a path).
  return std::make_unique<WorkerBackend>(
      kPythonWorker, "/usr/bin/env",
      std::vector<std::string>{"env", python != nullptr && *python != '\0' ? python : "python3",
                               "-m", "mlalab.worker", "--backend",
                               std::string(backend_name(backend))},
      backend, stop_signal);
}

}  // namespace mlalab::ab
