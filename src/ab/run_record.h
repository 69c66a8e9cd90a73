#pragma once
// Everything one `mlalab ab` run measured and concluded: the result model that the report
// writers read (and nothing below it). results.json is this record, raw samples included, so
// another tool can recompute every figure.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "ab/experiment.h"
#include "ab/verdict.h"

namespace mlalab::ab {

// The arms as measured: the baseline twice (A and A′), then each variant.
enum class ArmRole { kBaseline, kBaselineRepeat, kVariant };

struct ArmRecord {
  std::string name;        // "baseline", "baseline (A′)", or the variant's name
  ArmRole role = ArmRole::kVariant;
  Arm arm;                 // its declared config
  std::string config_text; // one line, e.g. "h16_t16_w4_s2 target_ctas:512"
  std::string code_hash;   // SHA-256 of what the arm runs: a CUDA variant's SASS, the CPU
                           // backend's machine code, a Python arm's source, params and
                           // versions, or the command line
  // A Python arm's Triton binaries as compiled in the run (Preparation::binary_hash, the
  // last one); empty otherwise.
  std::string binary_hash{};
  bool valid = true;       // false: failed the reference check at some sweep point, or gave
                           // no valid sample there; not timed from then on (samples of
                           // earlier points stay, unanalysed)
  std::string invalid_reason;
};

struct Sample {
  int point = 0;           // index into RunRecord::points
  int round = 0;
  int order = 0;           // position of this arm within its round (after shuffling)
  int arm = 0;             // index into RunRecord::arms
  double value = 0.0;      // metric: kernel arms, throughput in sequences/s (batch / time)
  double time_us = 0.0;    // kernel arms: median time of the sample's launches; 0 for commands
  int sm_clock_mhz = -1;   // read once after the sample's round (nvidia-smi costs about a
                           // sample); -1 when unavailable
  double power_w = -1.0;   // the board's draw, read with the clock: averaged over the last
                           // second, so the round's arms share it; -1 when unavailable
  bool throttled = false;  // excluded from the statistics
};

// A sample that gave no value (a command that failed, timed out, or printed no metric). It is
// not a Sample: the statistics never see it, but the report counts them per arm and point.
struct SampleFailure {
  int point = 0;  // index into RunRecord::points
  int round = 0;
  int arm = 0;    // index into RunRecord::arms
  std::string reason;  // e.g. "timed out after 5 s"
};

struct PointRecord {
  int concurrency = 0;
  std::vector<int> context_lengths;  // the lengths of the batch's requests at this point
  int splits = 0;                    // kernel baseline's split count here (for the report)
  int workers = 0;                   // its workers when its split is balanced; 0 otherwise
  // What each tuned arm, or Python arm whose launcher says, ran here
  // (Preparation::resolved_config), by arm index; empty when no arm has one, and an empty
  // string for the other arms.
  std::vector<std::string> resolved_configs{};
  int rounds = 0;
  int throttled_samples = 0;
  StopReason stop_reason = StopReason::kKeepGoing;  // kKeepGoing: the run ended before it stopped
  std::string stop_text;
  double elapsed_s = 0.0;
};

// How busy the host was at one moment of a run (ab/environment.h reads it); nullopt: unknown.
struct HostLoad {
  // /proc/loadavg: the machine's runnable tasks (and those waiting for I/O) averaged over 1, 5
  // and 15 minutes. At the end of a run they include the run's own threads.
  std::optional<double> load_1min;
  std::optional<double> load_5min;
  std::optional<double> load_15min;
  // The share of the usable CPUs' time that other processes used over the last
  // share_window_s seconds, in [0, 1]: at the start a short window in which mlalab sleeps, at
  // the end the whole run.
  std::optional<double> other_cpu_share;
  double share_window_s = 0.0;
};

// Where a run measured. Unknown or not applicable: empty strings, 0 counts, -1 clocks.
struct EnvironmentRecord {
  std::optional<Backend> backend;  // kNone: command arms only; nullopt: not recorded
  // cuda: the GPU the kernels ran on. none: the GPUs visible to the commands, "none" when
  // there is none. cpu: empty (no GPU ran anything).
  std::string gpu;
  int sm_count = 0;           // cuda only, as are the clocks, the driver and the runtime
  int sm_clock_mhz = -1;      // at start
  int max_sm_clock_mhz = -1;
  int mem_clock_mhz = -1;
  double power_limit_w = -1.0;  // the board's enforced power limit at the start
  std::string driver;
  std::string cuda_runtime;
  std::string commit;
  std::string host;
  std::string cpu_model;      // /proc/cpuinfo's model name
  int hardware_threads = 0;   // the machine's
  int usable_cpus = 0;        // the CPUs this process may run on (sched_getaffinity, taskset)
  HostLoad load_at_start;
  HostLoad load_at_end;       // read once the run has ended
};

struct RunRecord {
  Experiment experiment;
  EnvironmentRecord environment;
  std::vector<ArmRecord> arms;
  std::vector<PointRecord> points;
  std::vector<Sample> samples;
  std::vector<SampleFailure> failures;
  std::string started_utc;    // ISO 8601
  double elapsed_s = 0.0;
  bool partial = false;       // interrupted (Ctrl-C) or out of budget before every point stopped
  std::string partial_reason;
  std::uint64_t seed = 0;     // the run's seed (order shuffles, bootstrap)
  std::string command_line;   // how to reproduce
  std::string build_command;  // how to build what ran: the selection of variants and archs
  std::optional<SweepResult> analysis;  // absent when too little was measured
};

// The statistics over a record's samples: the SweepSamples view of its non-throttled samples
// (kernel metric: throughput, higher is better), analysed with the experiment's settings.
SweepSamples sweep_samples(const RunRecord& record);

}  // namespace mlalab::ab
