#pragma once
// The statistics of an A/B comparison: pure functions of measured samples, free of CUDA, so
// they are tested on the CPU alone. verdict.h turns their numbers into verdicts.
//
// Measurement model. At one sweep point (a concurrency level) the arms are measured in
// randomized rounds; in every round each arm gives one sample. Samples of one round share the
// machine's state at that moment (clocks, temperature, neighbours), so the comparison pairs
// them: a change is estimated from the rounds in which both arms have a sample, and the
// bootstrap resamples whole rounds. A slow round then slows both arms alike and cancels out
// of the ratio, which is what interleaving the arms buys.
//
// The statistic. change % = (median(treatment) / median(control) − 1) · 100 over the paired
// rounds, computed on throughputs (higher is better). Latencies are turned into throughputs
// (1 / latency) first, so a positive change always means "faster" and +10 % means 10 % more
// work per unit time. The median, not the mean: one slow sample (a clock dip) does not move it.
//
// The interval. A percentile bootstrap: B resamples of the paired rounds (round indices drawn
// with replacement, each round's arms kept together), the change of each, and the α/2 and
// 1 − α/2 quantiles of those B changes. Percentile intervals need no variance formula for a
// ratio of medians (there is no simple one) and respect its skew. Measured coverage is close to
// nominal at the default budget (tests/ab/verdict_test.cpp), and the test derived from them
// errs on the safe side at 20 rounds (tests/ab/stats_test.cpp).
//
// Reproducibility. Every resample is drawn from std::mt19937_64, seeded from Settings::seed
// and the comparison's identity, and round indices are drawn by our own rejection sampling
// (std::uniform_int_distribution is implementation-defined): identical input and seed give
// identical results, on every standard library.
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace mlalab::ab {

// Which way is better for the measured metric.
enum class Direction {
  kHigherIsBetter,  // a throughput: tokens/s, bytes/s
  kLowerIsBetter,   // a latency: µs per decode step
};

// How the p-values of one family of tests are corrected for multiplicity.
enum class Correction {
  kHolm,               // family-wise error rate ≤ α under any dependence (the default)
  kBenjaminiHochberg,  // false discovery rate ≤ α under independence or positive dependence
};

// Which tests form one family for the correction.
enum class CorrectionFamily {
  kEachVariant,  // the sweep points of one variant: each variant's verdict keeps its own rate
  kWholeSweep,   // every (variant, point): the whole report keeps the rate, at a cost in power
};

// Defaults, each with the reason for its value.
// 2 %: below this a kernel change is not worth a config entry, and it is about the smallest
// difference a GPU benchmark resolves in a few dozen rounds at the usual 1–3 % noise.
inline constexpr double kDefaultMinEffectPct = 2.0;
inline constexpr double kDefaultAlpha = 0.05;
// 2000: the Monte-Carlo sd of each end point of a 95 % percentile interval is then ≈ 3 % of the
// interval's half-width, and a p-value can reach 2 / 2001 ≈ 0.001, small enough for Holm to
// reject at α / m with up to m = 50 tests at α = 0.05 (see min_resamples_for).
inline constexpr int kDefaultResamples = 2000;
// 10: a resampled median of n rounds takes at most n distinct values, so below ~10 rounds the
// percentile interval is too coarse to trust whatever its width says.
inline constexpr int kDefaultMinRounds = 10;
// 100: enough for a 10 % change at 6 % per-sample noise to be called FASTER at every point of
// a 9-point sweep in 98 % of simulated sweeps (the interval's half-width is then ≈ 2 %);
// quieter measurements stop long before, on precision.
inline constexpr int kDefaultMaxRounds = 100;
// 10 minutes per sweep point: a safety net for slow arms, not the normal way to stop.
inline constexpr double kDefaultTimeBudgetS = 600.0;
inline constexpr std::uint64_t kDefaultSeed = 0x6d6c616c6162;  // "mlalab"

// What the analysis needs to know beyond the samples.
struct Settings {
  // The smallest change worth acting on, in %. A FASTER or SLOWER verdict needs the change to
  // be beyond both this and the A/A noise band; narrower intervals than this stop a point.
  double min_effect_pct = kDefaultMinEffectPct;
  // Error rate of the verdicts: family-wise (Holm) or false-discovery (BH) rate of false
  // FASTER/SLOWER point verdicts; intervals are at confidence 1 − alpha.
  double alpha = kDefaultAlpha;
  int resamples = kDefaultResamples;           // bootstrap resamples B per comparison
  int min_rounds = kDefaultMinRounds;          // fewer paired rounds: no verdict, no precision stop
  int max_rounds = kDefaultMaxRounds;          // round budget per sweep point
  double time_budget_s = kDefaultTimeBudgetS;  // wall-time budget per sweep point
  std::uint64_t seed = kDefaultSeed;
  Correction correction = Correction::kHolm;
  CorrectionFamily family = CorrectionFamily::kEachVariant;
};

// Throws std::invalid_argument naming the first setting out of range.
void validate(const Settings& settings);

// The fewest resamples with which a bootstrap p-value (≥ 2 / (B + 1)) can still be rejected
// at the strictest Holm level α / m.
int min_resamples_for(int tests, double alpha);

// One arm's samples at one sweep point, indexed by round. std::nullopt where the round's
// sample was discarded upstream (e.g. taken while the clock was throttled); an arm may also
// have fewer rounds than another. Values are in the metric's units and must be > 0.
using RoundSamples = std::vector<std::optional<double>>;

// Two arms aligned by round: only the rounds in which both have a sample, as throughputs.
struct PairedRounds {
  std::vector<double> treatment;
  std::vector<double> control;
  int size() const { return static_cast<int>(treatment.size()); }
};

// Pairs by round index and drops a round where either side is missing; turns latencies into
// throughputs. Throws std::invalid_argument on a sample that is not finite and > 0.
PairedRounds pair_rounds(const RoundSamples& treatment, const RoundSamples& control,
                         Direction direction);

// Median of the values present (the mean of the middle two for an even count), in the metric's
// units; NaN when no round has a sample.
double median_of(const RoundSamples& samples);

struct Interval {
  double lower = -std::numeric_limits<double>::infinity();
  double upper = std::numeric_limits<double>::infinity();

  double half_width() const { return (upper - lower) / 2; }
  bool contains(double value) const { return lower <= value && value <= upper; }
};

// The bootstrap distribution of a change, in %: its B replicates, sorted. Empty when there
// were too few rounds to resample.
class BootstrapDistribution {
 public:
  BootstrapDistribution() = default;
  explicit BootstrapDistribution(std::vector<double> replicates_pct);

  int size() const { return static_cast<int>(sorted_pct_.size()); }

  // The `probability` quantile, interpolated linearly between order statistics (Hyndman and
  // Fan's type 7, R's default). ±infinity when empty.
  double quantile(double probability) const;

  // One-sided bootstrap p-values, (count + 1) / (B + 1): the +1 counts the observed sample as
  // one of the resamples, so that no finite B ever claims p = 0.
  //   p_exceeds(t):     of H0 "change ≤ t", the evidence that the change is above t
  //   p_falls_below(t): of H0 "change ≥ t", the evidence that the change is below t
  double p_exceeds(double threshold_pct) const;
  double p_falls_below(double threshold_pct) const;

  // Of H0 "|change| ≤ threshold": min(1, 2 · min(p_exceeds(t), p_falls_below(−t))), the two
  // one-sided tests with the usual factor 2 for not knowing the direction in advance. It is
  // below α exactly when the 1 − α percentile interval lies wholly beyond ±threshold (up to the
  // +1 above), so verdicts drawn from it agree with the printed interval. With threshold 0 it
  // is the plain two-sided bootstrap p-value 2 · min(P(boot ≤ 0), P(boot ≥ 0)).
  double p_beyond(double threshold_pct) const;

 private:
  std::vector<double> sorted_pct_;
};

// What a comparison of two arms at one sweep point found.
struct Change {
  int paired_rounds = 0;
  double change_pct = std::numeric_limits<double>::quiet_NaN();  // NaN without paired rounds
  Interval interval_pct;  // percentile bootstrap at confidence 1 − alpha; infinite below 2 rounds

  double half_width_pct() const { return interval_pct.half_width(); }
};

struct ChangeEstimate {
  Change change;
  BootstrapDistribution distribution;
};

// The fewest paired rounds that can be resampled at all.
inline constexpr int kMinResampledRounds = 2;

// The change of treatment relative to control with its paired bootstrap distribution and
// interval: `settings.resamples` resamples, confidence 1 − settings.alpha, drawn from a
// generator seeded with (settings.seed, stream): pass a different stream for each comparison
// so that their resamples are independent.
ChangeEstimate estimate_change(const PairedRounds& rounds, const Settings& settings,
                               std::span<const std::uint32_t> stream);

// Multiplicity-adjusted p-values, in the input's order. Compare each with α.
//   Holm:  sort ascending; adjusted p(k) = max over j ≤ k of min(1, (m − j + 1) · p(j)).
//   BH:    sort ascending; adjusted p(k) = min over j ≥ k of min(1, m / j · p(j)).
std::vector<double> adjust_p_values(std::span<const double> p_values, Correction correction);

// The paragraph the report prints under its verdicts: which correction, over which family,
// which rate it keeps at which α, and why that method.
std::string correction_method_note(const Settings& settings);

// The z with P(Z > z) = upper_tail for a standard normal Z; 0 < upper_tail < 1.
double normal_upper_quantile(double upper_tail);

}  // namespace mlalab::ab
