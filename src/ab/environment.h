#pragma once
// Where an A/B run measures: the machine part of its record (run_record.h's
// EnvironmentRecord), so that results from different machines or builds are never compared
// blindly, and how busy the host was at the start and at the end of the run, since other
// processes on the CPUs bias CPU timings. `mlalab verify` reads the machine with the same
// functions.
//
// The /proc parsers are pure functions of the file's text, apart from the reads, so that they
// are tested with hand-made text.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ab/run_record.h"
#include "bench/device_info.h"

namespace mlalab::ab {

// ---- The machine ----------------------------------------------------------------------------

// The CUDA backend on `device`: its name and SMs, the SM clock now, its maximum and the memory
// clock (one nvidia-smi call; -1 for what it cannot tell), driver, runtime, and the host.
EnvironmentRecord cuda_environment(const bench::DeviceInfo& device);

// The CPU backend: the host, no GPU.
EnvironmentRecord cpu_environment();

// Command arms (Backend::kNone): the host and the GPUs visible to the commands, which may
// use them.
EnvironmentRecord command_environment();

// Every backend's record starts with the host: its name, CPU model, hardware threads, the CPUs
// this process may use, and the commit.
EnvironmentRecord host_environment();

// The GPUs a command would see, as one phrase: "none", "NVIDIA H200", "2× NVIDIA H200",
// "NVIDIA H200, NVIDIA A100 80GB PCIe" (identical names counted, in device order).
std::string gpus_text(const std::vector<std::string>& names);

// /proc/cpuinfo's first "model name"; empty when it has none (e.g. on arm64).
std::string parse_cpu_model(std::string_view proc_cpuinfo);

// ---- The load -------------------------------------------------------------------------------

struct LoadAverage {
  double load_1min = 0.0;
  double load_5min = 0.0;
  double load_15min = 0.0;
};

// The first three fields of /proc/loadavg ("0.34 0.70 0.40 1/123 4567"); nullopt otherwise.
std::optional<LoadAverage> parse_load_average(std::string_view proc_loadavg);

// Jiffies (USER_HZ ticks) of a set of CPUs since boot: busy is every state but idle and
// iowait, total every state (user, nice, system, idle, iowait, irq, softirq, steal; guest time
// is already inside user and nice). Steal counts as busy: the hypervisor gave the CPU away.
struct CpuJiffies {
  std::uint64_t busy = 0;
  std::uint64_t total = 0;
};

// The sum over `cpus` of the "cpuN" lines of /proc/stat; nullopt when a line is missing or
// malformed, or `cpus` is empty.
std::optional<CpuJiffies> parse_cpu_jiffies(std::string_view proc_stat,
                                            const std::vector<int>& cpus);

// The share of the CPUs' time that other processes used between two readings:
//   (busy jiffies − this process's CPU time) / total jiffies,
// with this process's CPU time (own_cpu_s, its reaped children's included) turned into
// jiffies at jiffies_per_s. Total jiffies are elapsed time × CPUs. Clamped to [0, 1], since
// the two clocks tick apart by up to a jiffy per CPU; nullopt when no time passed.
std::optional<double> other_cpu_share(const CpuJiffies& start, const CpuJiffies& end,
                                      double own_cpu_s, double jiffies_per_s);

// What other_cpu_share compares, read now: the usable CPUs, their jiffies, and the CPU time
// of this process and of its reaped children (getrusage).
struct CpuUsage {
  std::vector<int> cpus;
  std::optional<CpuJiffies> jiffies;
  double own_cpu_s = 0.0;
};
CpuUsage read_cpu_usage();

// The reading at the start of a run, `start` read just before: the load averages, and the
// share other processes used over a short window from `start` in which this process sleeps
// (kStartWindowS: the load average lags a minute behind, so it cannot tell a build that just
// ended from one still running).
inline constexpr double kStartWindowS = 0.5;
HostLoad read_start_load(const CpuUsage& start);

// The reading at the end of a run: the load averages, and the share other processes used
// since `start` on its CPUs (the same `start` as the start reading's, so that even a run of
// milliseconds has a window of kStartWindowS at least).
HostLoad read_end_load(const CpuUsage& start);

// Why a reading makes the run's timings suspect, or nullopt: other processes used more than
// kBusyShare of the usable CPUs. They take time slices from the arms unequally: an arm that
// uses every usable CPU always shares one with them, a one-thread arm often finds an idle one,
// so the change between two such arms moves with the load (the CPU demo, 2 threads against 1
// on 2 cores: REJECTED at −36…−48% at a load of 0.5, INCONCLUSIVE at a load of 5-7). At 10%
// the arm on every CPU can lose about a tenth of its time, several times the default minimum
// effect (2%), while an idle machine's background (daemons, a shell) takes a few percent at
// most. The A/A arm cannot calibrate this away: it runs the baseline's thread count only.
// The load average is recorded but not judged: it lags a minute behind and counts tasks
// waiting for I/O, and at the end it counts the run itself.
inline constexpr double kBusyShare = 0.10;
std::optional<std::string> start_load_warning(const EnvironmentRecord& environment);
std::optional<std::string> end_load_warning(const EnvironmentRecord& environment);

// ---- As text, for the console and the report -------------------------------------------------

// "vm (AMD EPYC 7B13, 2 threads)", "vm (AMD EPYC 7B13, 2 threads, 1 usable)" under taskset.
std::string host_text(const EnvironmentRecord& environment);

// What ran the arms, as it follows "the experiment ran ...":
//   cuda: "on the cuda backend, NVIDIA H200 (132 SMs)"
//   cpu:  "on the cpu backend, host vm (AMD EPYC 7B13, 2 threads)"
//   none: "as command arms on host vm (AMD EPYC 7B13, 2 threads; GPUs visible: none)"
std::string ran_on_text(const EnvironmentRecord& environment);

// "load average 0.34, 0.70, 0.40 (1, 5, 15 min); other processes used 3.0% of the 2 usable
// CPUs over 0.5 s"; the end reading says that the load average includes the run.
std::string start_load_text(const EnvironmentRecord& environment);
std::string end_load_text(const EnvironmentRecord& environment);

}  // namespace mlalab::ab
