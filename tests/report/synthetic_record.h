#pragma once
// A RunRecord with simulated samples of known effect, analysed with ab::analyze_sweep, for the
// report tests. Deterministic: every sample is a level times a fixed wiggle (no generator).
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ab/run_record.h"
#include "ab/verdict.h"

namespace mlalab::report::testing {

// The variants and their true change (%) at each concurrency of kConcurrency.
inline const std::vector<int> kConcurrency = {1, 4, 16, 64};
// Baseline throughput (sequences/s) per point; the last one dips, which monotonicity flags.
inline const std::vector<double> kBaselineLevel = {1000, 3800, 14000, 12000};
inline const std::vector<int> kSplits = {8, 4, 2, 1};
constexpr int kRounds = 20;
constexpr double kSpread = 0.01;       // ±1 % per-sample wiggle
constexpr double kNoisySpread = 0.08;  // the "4 stages" arm: too noisy to decide in 20 rounds
// At C4 (index 1) the A/A repeat A′ drifts upwards, from +0 % in the first round to +10 % in
// the last, as a neighbour that slowed A alone would: the A/A check fails there, and every
// verdict at C4 is WITHHELD.
constexpr std::size_t kDriftingPoint = 1;
constexpr double kRepeatDriftPct = 10;

struct SimulatedArm {
  std::string name;
  std::string variant;
  std::optional<double> prediction_pct;
  std::vector<double> effect_pct;  // per point
  double spread = kSpread;
  bool valid = true;
};

// With the A/A check failing at C4 (kDriftingPoint), each variant's verdicts are those of C1,
// C16 and C64, against the threshold T = 2 %:
inline std::vector<SimulatedArm> simulated_variants() {
  return {
      {"8 warps", "h16_t16_w8_s2", 20.0, {-14, -10, -7, -5}},     // REJECTED: SLOWER at all 3
      {"3 stages", "h16_t16_w4_s3", 5.0, {8, 6, 0, -7}},          // MIXED: FASTER, WITHIN, SLOWER
      {"same code", "h16_t16_w4_s2", std::nullopt, {0, 0, 0, 0}},  // INCONCLUSIVE: WITHIN
      {"4 stages", "h16_t16_w4_s4", 3.0, {3, 3, 3, 3}, kNoisySpread},  // INCONCLUSIVE: AMBIGUOUS
      {"broken", "h64_t64_w8_s4", 10.0, {}, kSpread, false},          // INVALID
      // ACCEPTED: FASTER at C1; at C16 −1 %, inside ±2 % but real: SMALL_CHANGE; at C64
      // −2.2 %, an interval across −2 % that excludes 0: AMBIGUOUS.
      {"32 heads", "h32_t16_w4_s2", 4.0, {4, 0, -1, -2.2}},
  };
}

inline double wiggle(int round, double phase) {
  constexpr double kGoldenAngle = 2.39996;  // never repeats a phase
  return std::sin(kGoldenAngle * round + phase);
}

inline ab::Arm kernel_arm(std::string name, std::string variant, std::optional<double> prediction) {
  return ab::Arm{.name = std::move(name),
                 .prediction_pct = prediction,
                 .config = ab::KernelArm{.variant = std::move(variant), .split = {}, .cpu_threads = 0}};
}

// A made-up SHA-256 in hex, different for every variant name.
inline std::string fake_hash(const std::string& name) {
  constexpr const char* kHex = "0123456789abcdef";
  std::uint64_t state = 14695981039346656037ull;  // FNV-1a over the name, then a generator
  for (const char c : name) state = (state ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  std::string hash;
  for (int i = 0; i < 64; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    hash += kHex[(state >> 60) & 0xF];
  }
  return hash;
}

inline ab::ArmRecord arm_record(const ab::Arm& arm, std::string name, ab::ArmRole role) {
  const auto& kernel = std::get<ab::KernelArm>(arm.config);
  return ab::ArmRecord{.name = std::move(name),
                       .role = role,
                       .arm = arm,
                       .config_text = kernel.variant + " " + kernel.split.to_string(),
                       .code_hash = fake_hash(kernel.variant),
                       .valid = true,
                       .invalid_reason = {}};
}

// A 2-thread host as the environment records it, on `backend`, with no load readings.
inline ab::EnvironmentRecord two_thread_host(Backend backend) {
  ab::EnvironmentRecord environment;
  environment.backend = backend;
  environment.commit = "0123456789ab";
  environment.host = "vm";
  environment.cpu_model = "AMD EPYC 7B13";
  environment.hardware_threads = 2;
  environment.usable_cpus = 2;
  return environment;
}

inline const char* kSourceText =
    "name = \"warps_and_stages\"\n"
    "hypothesis = \"More warps hide latency: +20 %.\"\n"
    "[baseline]\nvariant = \"h16_t16_w4_s2\"\n";

// The SweepSamples view of the record's non-throttled samples, built here rather than with
// ab::sweep_samples so that the report tests stand on their own.
inline ab::SweepSamples sweep_of(const ab::RunRecord& record) {
  ab::SweepSamples sweep;
  std::map<int, int> variant_slot;  // arm index → index into variants
  for (std::size_t a = 0; a < record.arms.size(); ++a) {
    if (record.arms[a].role == ab::ArmRole::kVariant && record.arms[a].valid) {
      variant_slot[static_cast<int>(a)] = static_cast<int>(sweep.variant_names.size());
      sweep.variant_names.push_back(record.arms[a].name);
    }
  }
  for (std::size_t p = 0; p < record.points.size(); ++p) {
    const auto rounds = static_cast<std::size_t>(record.points[p].rounds);
    sweep.points.push_back({.concurrency = record.points[p].concurrency,
                            .baseline = ab::RoundSamples(rounds),
                            .baseline_repeat = ab::RoundSamples(rounds),
                            .variants = std::vector<ab::RoundSamples>(sweep.variant_names.size(),
                                                                      ab::RoundSamples(rounds))});
  }
  for (const ab::Sample& sample : record.samples) {
    if (sample.throttled) continue;
    ab::PointSamples& point = sweep.points[static_cast<std::size_t>(sample.point)];
    const auto round = static_cast<std::size_t>(sample.round);
    const ab::ArmRole role = record.arms[static_cast<std::size_t>(sample.arm)].role;
    if (role == ab::ArmRole::kBaseline) point.baseline[round] = sample.value;
    if (role == ab::ArmRole::kBaselineRepeat) point.baseline_repeat[round] = sample.value;
    if (role == ab::ArmRole::kVariant) {
      point.variants[static_cast<std::size_t>(variant_slot.at(sample.arm))][round] = sample.value;
    }
  }
  return sweep;
}

// Looks after 10 and 20 rounds, so that the 20 rounds run are the last look, where most of α
// is spent; the rest are the defaults (T = 2 %, α = 0.05, Holm over each variant's points).
inline ab::Settings two_look_settings() {
  ab::Settings settings;
  settings.min_rounds = 10;
  settings.max_rounds = kRounds;
  return settings;
}

// The whole record: 4 points × 20 rounds × (A, A′, 5 valid variants), one INVALID variant,
// two throttled samples (excluded), analysed.
inline ab::RunRecord synthetic_record(std::vector<double> baseline_level = kBaselineLevel) {
  ab::RunRecord record;
  ab::Experiment& experiment = record.experiment;
  experiment.name = "warps_and_stages";
  experiment.hypothesis = "More warps hide the latency of the KV loads: +20 %.\nStages: +5 %.";
  experiment.backend = Backend::kCuda;
  experiment.baseline = kernel_arm("baseline", "h16_t16_w4_s2", std::nullopt);
  const std::vector<SimulatedArm> variants = simulated_variants();
  for (const SimulatedArm& variant : variants) {
    experiment.variants.push_back(kernel_arm(variant.name, variant.variant, variant.prediction_pct));
  }
  experiment.sweep.concurrency = kConcurrency;
  experiment.stats = two_look_settings();
  experiment.source_path = "experiments/warps_and_stages.toml";
  experiment.source_text = kSourceText;

  record.environment = {.backend = Backend::kCuda,
                        .gpu = "NVIDIA H200",
                        .sm_count = 132,
                        .sm_clock_mhz = 1980,
                        .max_sm_clock_mhz = 1980,
                        .mem_clock_mhz = 3201,
                        .driver = "570.86.15 (CUDA 12.8)",
                        .cuda_runtime = "13.0",
                        .commit = "0123456789ab",
                        .host = "gpu-node-7",
                        // The host's CPU and load unknown, as in results.json of schema 1.
                        .cpu_model = {},
                        .hardware_threads = 0,
                        .usable_cpus = 0,
                        .load_at_start = {},
                        .load_at_end = {}};
  record.arms.push_back(arm_record(experiment.baseline, "baseline", ab::ArmRole::kBaseline));
  record.arms.push_back(
      arm_record(experiment.baseline, "baseline (A′)", ab::ArmRole::kBaselineRepeat));
  for (std::size_t v = 0; v < variants.size(); ++v) {
    ab::ArmRecord arm = arm_record(experiment.variants[v], variants[v].name, ab::ArmRole::kVariant);
    if (!variants[v].valid) {
      arm.valid = false;
      arm.invalid_reason = "out[0][3][17] = nan, reference 0.25";
    }
    record.arms.push_back(arm);
  }

  for (std::size_t p = 0; p < kConcurrency.size(); ++p) {
    record.points.push_back({.concurrency = kConcurrency[p],
                             .context_lengths = std::vector<int>(
                                 static_cast<std::size_t>(kConcurrency[p]), 4096),
                             .splits = kSplits[p],
                             .rounds = kRounds,
                             .throttled_samples = 0,
                             .stop_reason = ab::StopReason::kRoundBudgetSpent,
                             .stop_text = "round budget of 20 rounds spent",
                             .elapsed_s = 12.5});
    for (int round = 0; round < kRounds; ++round) {
      int order = 0;
      for (std::size_t a = 0; a < record.arms.size(); ++a) {
        const ab::ArmRecord& arm = record.arms[a];
        double effect = 0;
        double spread = kSpread;
        if (arm.role == ab::ArmRole::kBaselineRepeat && p == kDriftingPoint) {
          effect = kRepeatDriftPct * round / (kRounds - 1);
        }
        if (arm.role == ab::ArmRole::kVariant) {
          const SimulatedArm& simulated = variants[a - 2];
          if (!simulated.valid) continue;  // never timed
          effect = simulated.effect_pct[p];
          spread = simulated.spread;
        }
        const double level = baseline_level[p] * (1 + effect / 100);
        const double value = level * (1 + spread * wiggle(round, static_cast<double>(a)));
        record.samples.push_back({.point = static_cast<int>(p),
                                  .round = round,
                                  .order = order++,
                                  .arm = static_cast<int>(a),
                                  .value = value,
                                  .time_us = kConcurrency[p] / value * 1e6,
                                  .sm_clock_mhz = 1980,
                                  .throttled = false});
      }
    }
  }
  // Two throttled samples, far too slow: the statistics must not see them. Each round of a point
  // holds 7 samples (A, A′ and the 5 valid variants, in arm order).
  for (const int index : {0, 46}) {  // C1: the baseline in round 0, "same code" in round 6
    ab::Sample& sample = record.samples[static_cast<std::size_t>(index)];
    sample.throttled = true;
    sample.value *= 0.5;
    sample.sm_clock_mhz = 1200;
    record.points[static_cast<std::size_t>(sample.point)].throttled_samples += 1;
  }

  record.started_utc = "2025-06-01T12:00:00Z";
  record.elapsed_s = 50.0;
  record.seed = experiment.stats.seed;
  record.command_line = "mlalab ab experiments/warps_and_stages.toml";
  record.analysis = ab::analyze_sweep(sweep_of(record), experiment.stats);
  return record;
}

}  // namespace mlalab::report::testing
