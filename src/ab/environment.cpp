#include "ab/environment.h"

#include <cuda_runtime_api.h>
#include <sys/resource.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <chrono>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/usable_cpus.h"

namespace mlalab::ab {
namespace {

constexpr double kPercent = 100.0;

std::string host_name() {
  constexpr std::size_t kHostNameChars = 256;
  std::array<char, kHostNameChars> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) return {};
  return name.data();
}

// The whole file; empty when it cannot be read (/proc files report a size of 0, so they are
// read to their end rather than by their size).
std::string read_text_file(const char* path) {
  std::ifstream in(path);
  if (!in) return {};
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) {
    text.remove_prefix(1);
  }
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return text;
}

// The next whitespace-separated word of *rest, consumed; empty at the end.
std::string_view next_word(std::string_view* rest) {
  *rest = trimmed(*rest);
  const auto end = std::min(rest->find_first_of(" \t\n"), rest->size());
  const std::string_view word = rest->substr(0, end);
  rest->remove_prefix(end);
  return word;
}

template <typename Number>
std::optional<Number> parse_number(std::string_view word) {
  Number value{};
  const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), value);
  if (error != std::errc{} || end != word.data() + word.size()) return std::nullopt;
  return value;
}

// The CPU time of this process and of its children that have been waited for.
double own_cpu_seconds() {
  double seconds = 0.0;
  for (const int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    rusage usage{};
    if (getrusage(who, &usage) != 0) continue;
    for (const timeval& time : {usage.ru_utime, usage.ru_stime}) {
      seconds += static_cast<double>(time.tv_sec) + static_cast<double>(time.tv_usec) * 1e-6;
    }
  }
  return seconds;
}

std::optional<LoadAverage> read_load_average() {
  return parse_load_average(read_text_file("/proc/loadavg"));
}

HostLoad load_reading(const CpuUsage& start, const CpuUsage& end) {
  HostLoad load;
  if (const auto average = read_load_average()) {
    load.load_1min = average->load_1min;
    load.load_5min = average->load_5min;
    load.load_15min = average->load_15min;
  }
  const long jiffies_per_s = sysconf(_SC_CLK_TCK);
  if (start.jiffies && end.jiffies && jiffies_per_s > 0) {
    load.other_cpu_share = other_cpu_share(*start.jiffies, *end.jiffies,
                                           end.own_cpu_s - start.own_cpu_s,
                                           static_cast<double>(jiffies_per_s));
    if (load.other_cpu_share) {
      load.share_window_s =
          static_cast<double>(end.jiffies->total - start.jiffies->total) /
          (static_cast<double>(jiffies_per_s) * static_cast<double>(start.cpus.size()));
    }
  }
  return load;
}

CpuUsage read_cpu_usage_of(std::vector<int> cpus) {
  CpuUsage usage{.cpus = std::move(cpus), .jiffies = std::nullopt, .own_cpu_s = 0.0};
  usage.jiffies = parse_cpu_jiffies(read_text_file("/proc/stat"), usage.cpus);
  usage.own_cpu_s = own_cpu_seconds();
  return usage;
}

// "vm (AMD EPYC 7B13, 2 threads, 1 usable{extra})"
std::string host_phrase(const EnvironmentRecord& environment, std::string_view extra) {
  std::string threads = "threads unknown";
  if (environment.hardware_threads > 0) {
    threads = fmt::format("{} thread{}", environment.hardware_threads,
                          environment.hardware_threads == 1 ? "" : "s");
    if (environment.usable_cpus > 0 && environment.usable_cpus != environment.hardware_threads) {
      threads += fmt::format(", {} usable", environment.usable_cpus);
    }
  }
  return fmt::format("{} ({}, {}{})", environment.host.empty() ? "unknown" : environment.host,
                     environment.cpu_model.empty() ? "CPU model unknown" : environment.cpu_model,
                     threads, extra);
}

std::string load_average_text(const HostLoad& load) {
  if (!load.load_1min || !load.load_5min || !load.load_15min) return "load average unknown";
  return fmt::format("load average {:.2f}, {:.2f}, {:.2f} (1, 5, 15 min)", *load.load_1min,
                     *load.load_5min, *load.load_15min);
}

std::string usable_cpus_text(const EnvironmentRecord& environment) {
  return environment.usable_cpus > 0
             ? fmt::format("the {} usable CPU{}", environment.usable_cpus,
                           environment.usable_cpus == 1 ? "" : "s")
             : "the usable CPUs";
}

std::string share_text(const EnvironmentRecord& environment, const HostLoad& load,
                       std::string_view window) {
  if (!load.other_cpu_share) return "the share of other processes is unknown";
  return fmt::format("other processes used {:.1f}% of {} {}", *load.other_cpu_share * kPercent,
                     usable_cpus_text(environment), window);
}

std::optional<std::string> busy_warning(const EnvironmentRecord& environment,
                                        const HostLoad& load, std::string_view when) {
  if (!load.other_cpu_share || *load.other_cpu_share <= kBusyShare) return std::nullopt;
  return fmt::format(
      "other processes used {:.0f}% of {} {}, more than {:.0f}%: they compete with the arms "
      "for the CPUs, and unequally, so the timings and the verdicts may be biased; rerun on an "
      "idle machine",
      *load.other_cpu_share * kPercent, usable_cpus_text(environment), when,
      kBusyShare * kPercent);
}

}  // namespace

EnvironmentRecord host_environment() {
  EnvironmentRecord environment;
  environment.commit = bench::git_commit();
  environment.host = host_name();
  environment.cpu_model = parse_cpu_model(read_text_file("/proc/cpuinfo"));
  environment.hardware_threads = static_cast<int>(std::thread::hardware_concurrency());
  environment.usable_cpus = static_cast<int>(usable_cpu_list().size());
  return environment;
}

EnvironmentRecord cuda_environment(const bench::DeviceInfo& device) {
  const bench::GpuClocks clocks = bench::read_gpu_clocks();
  EnvironmentRecord environment = host_environment();
  environment.backend = Backend::kCuda;
  environment.gpu = device.gpu;
  environment.sm_count = device.sm_count;
  environment.sm_clock_mhz =
      clocks.sm_mhz > 0 ? clocks.sm_mhz : (device.sm_clock_is_current ? device.sm_clock_mhz : -1);
  environment.max_sm_clock_mhz = clocks.max_sm_mhz > 0 ? clocks.max_sm_mhz : device.max_sm_clock_mhz;
  environment.mem_clock_mhz = clocks.mem_mhz;
  environment.power_limit_w = clocks.power_limit_w;
  environment.driver = device.driver;
  environment.cuda_runtime = device.cuda_runtime;
  return environment;
}

EnvironmentRecord cpu_environment() {
  EnvironmentRecord environment = host_environment();
  environment.backend = Backend::kCpu;
  return environment;
}

EnvironmentRecord command_environment() {
  EnvironmentRecord environment = host_environment();
  environment.backend = Backend::kNone;
  // Without a driver or a GPU the count fails or is 0: either way the commands see none.
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();
    count = 0;
  }
  std::vector<std::string> names;
  for (int device = 0; device < count; ++device) {
    cudaDeviceProp properties{};
    names.push_back(cudaGetDeviceProperties(&properties, device) == cudaSuccess
                        ? std::string(properties.name)
                        : fmt::format("GPU {} (unreadable)", device));
  }
  environment.gpu = gpus_text(names);
  return environment;
}

std::string gpus_text(const std::vector<std::string>& names) {
  if (names.empty()) return "none";
  std::vector<std::string> groups;
  for (std::size_t first = 0; first < names.size();) {
    std::size_t end = first + 1;
    while (end < names.size() && names[end] == names[first]) ++end;
    const std::size_t count = end - first;
    groups.push_back(count == 1 ? names[first] : fmt::format("{}× {}", count, names[first]));
    first = end;
  }
  return fmt::format("{}", fmt::join(groups, ", "));
}

std::string parse_cpu_model(std::string_view proc_cpuinfo) {
  constexpr std::string_view kKey = "model name";
  while (!proc_cpuinfo.empty()) {
    const auto end = std::min(proc_cpuinfo.find('\n'), proc_cpuinfo.size());
    const std::string_view line = proc_cpuinfo.substr(0, end);
    proc_cpuinfo.remove_prefix(std::min(end + 1, proc_cpuinfo.size()));
    const auto colon = line.find(':');
    if (colon != std::string_view::npos && trimmed(line.substr(0, colon)) == kKey) {
      return std::string(trimmed(line.substr(colon + 1)));
    }
  }
  return {};
}

std::optional<LoadAverage> parse_load_average(std::string_view proc_loadavg) {
  std::array<double, 3> loads{};
  for (double& load : loads) {
    const auto value = parse_number<double>(next_word(&proc_loadavg));
    if (!value || *value < 0) return std::nullopt;
    load = *value;
  }
  return LoadAverage{.load_1min = loads[0], .load_5min = loads[1], .load_15min = loads[2]};
}

std::optional<CpuJiffies> parse_cpu_jiffies(std::string_view proc_stat,
                                            const std::vector<int>& cpus) {
  // user nice system idle iowait irq softirq steal: later fields (guest, guest_nice) are
  // already counted in user and nice.
  constexpr int kStates = 8;
  constexpr int kIdle = 3;
  constexpr int kIowait = 4;
  if (cpus.empty()) return std::nullopt;
  CpuJiffies sum;
  std::size_t found = 0;
  while (!proc_stat.empty()) {
    const auto end = std::min(proc_stat.find('\n'), proc_stat.size());
    std::string_view rest = proc_stat.substr(0, end);
    proc_stat.remove_prefix(std::min(end + 1, proc_stat.size()));
    const std::string_view name = next_word(&rest);
    if (!name.starts_with("cpu") || name.size() == 3) continue;  // "cpu" alone: the aggregate
    const auto cpu = parse_number<int>(name.substr(3));
    if (!cpu) return std::nullopt;
    if (std::find(cpus.begin(), cpus.end(), *cpu) == cpus.end()) continue;
    for (int state = 0; state < kStates; ++state) {
      const auto jiffies = parse_number<std::uint64_t>(next_word(&rest));
      if (!jiffies) return std::nullopt;
      sum.total += *jiffies;
      if (state != kIdle && state != kIowait) sum.busy += *jiffies;
    }
    ++found;
  }
  if (found != cpus.size()) return std::nullopt;
  return sum;
}

std::optional<double> other_cpu_share(const CpuJiffies& start, const CpuJiffies& end,
                                      double own_cpu_s, double jiffies_per_s) {
  if (end.total <= start.total || end.busy < start.busy || !(jiffies_per_s > 0)) {
    return std::nullopt;
  }
  const double busy = static_cast<double>(end.busy - start.busy);
  const double total = static_cast<double>(end.total - start.total);
  return std::clamp((busy - own_cpu_s * jiffies_per_s) / total, 0.0, 1.0);
}

CpuUsage read_cpu_usage() { return read_cpu_usage_of(usable_cpu_list()); }

HostLoad read_start_load(const CpuUsage& start) {
  std::this_thread::sleep_for(std::chrono::duration<double>(kStartWindowS));
  return load_reading(start, read_cpu_usage_of(start.cpus));
}

HostLoad read_end_load(const CpuUsage& start) {
  return load_reading(start, read_cpu_usage_of(start.cpus));
}

std::optional<std::string> start_load_warning(const EnvironmentRecord& environment) {
  return busy_warning(environment, environment.load_at_start,
                      fmt::format("at the start (over {:.1f} s)",
                                  environment.load_at_start.share_window_s));
}

std::optional<std::string> end_load_warning(const EnvironmentRecord& environment) {
  return busy_warning(environment, environment.load_at_end, "during the run");
}

std::string host_text(const EnvironmentRecord& environment) {
  return host_phrase(environment, "");
}

std::string ran_on_text(const EnvironmentRecord& environment) {
  if (environment.backend == Backend::kCuda) {
    std::string gpu = environment.gpu.empty() ? "an unknown GPU" : environment.gpu;
    if (environment.sm_count > 0) gpu += fmt::format(" ({} SMs)", environment.sm_count);
    return "on the cuda backend, " + gpu;
  }
  if (environment.backend == Backend::kCpu) return "on the cpu backend, host " + host_text(environment);
  if (environment.backend != Backend::kNone) return "on an unknown backend, host " + host_text(environment);
  return "as command arms on host " +
         host_phrase(environment,
                     fmt::format("; GPUs visible: {}",
                                 environment.gpu.empty() ? "unknown" : environment.gpu));
}

std::string start_load_text(const EnvironmentRecord& environment) {
  const HostLoad& load = environment.load_at_start;
  return fmt::format("{}; {}", load_average_text(load),
                     share_text(environment, load,
                                fmt::format("over {:.1f} s", load.share_window_s)));
}

std::string end_load_text(const EnvironmentRecord& environment) {
  const HostLoad& load = environment.load_at_end;
  return fmt::format("{}, this run's own threads included; {}", load_average_text(load),
                     share_text(environment, load, "during the run"));
}

}  // namespace mlalab::ab
