#pragma once
// The statistics of an A/B comparison: pure functions of measured samples, free of CUDA, so
// they are tested on the CPU alone. verdict.h turns their numbers into verdicts.
//
// Measurement model. At one sweep point (a concurrency level) the arms are measured in
// randomized rounds; in every round each arm gives one sample. Samples of one round share the
// machine's state at that moment (clocks, temperature, neighbours), so the comparison pairs
// them: a change is estimated from the rounds in which both arms have a sample. A slow round
// then slows both arms alike and cancels out of their ratio, which is what interleaving buys.
//
// The statistic. Per paired round r, d_r = ln(treatment_r / control_r), on throughputs
// (latencies are inverted first, so that + always means faster). The estimate of the change
// is the 15 % trimmed mean of the d_r, its standard error the Tukey-McLaughlin one (the
// winsorized standard deviation / ((1 − 2 · 0.15) · √n)), and its interval and tests use
// Student's t with n − 2g − 1 degrees of freedom (g = ⌊0.15 n⌋ values trimmed at each end).
// change % = (exp(estimate) − 1) · 100. Why this estimator (tests/ab/estimator_study_test.cpp
// measures it, docs/experiments.md has the table): of the mean, the 10, 15 and 20 % trimmed
// means and the arms' medians (the earlier estimator) on 60 rounds at 6 % noise, it needs the
// fewest rounds in the worst case over normal noise and 1 % or 5 % of samples halved: about a
// tenth more than the mean when nothing is halved, where the medians need 40 % more, and the
// fewest of all at 5 % halved, where the mean needs nearly five times as many. Its 95 %
// intervals cover at 94-96 % in all three, and it needs no resampling: a look costs
// microseconds.
//
// Repeated looks. A point is analysed at a few fixed round counts (look_schedule: min_rounds,
// then doubling, and max_rounds), and may stop at any of them. Each look j spends a share w_j
// of α (an O'Brien-Fleming-type spending function: almost nothing early, most at the last
// look), and a comparison's p-value over its looks is min_j p_j / w_j, capped at 1: by the
// union bound P(any p_j ≤ w_j · α) ≤ α, whatever the looks' dependence and whichever look the
// point stops at, so the tests keep their level under the stopping rule.
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
// 10: the trimmed mean's t interval has 7 degrees of freedom at 10 rounds; fewer make its
// standard error itself too uncertain to plan or stop on.
inline constexpr int kDefaultMinRounds = 10;
// 150: at 6 % per-sample noise (a serving benchmark), enough to find a true 5 % change at
// ≥ 90 % of the points of a 9-point sweep (tests/ab/verdict_test.cpp); quieter measurements
// stop long before.
inline constexpr int kDefaultMaxRounds = 150;
// 10 minutes per sweep point: a safety net for slow arms, not the normal way to stop.
inline constexpr double kDefaultTimeBudgetS = 600.0;
inline constexpr std::uint64_t kDefaultSeed = 0x6d6c616c6162;  // "mlalab"
// The fraction trimmed from each end of the paired log ratios (see the top of this file).
inline constexpr double kTrimFraction = 0.15;
// The power that planning and the minimum detectable effect are stated at.
inline constexpr double kPlanningPower = 0.9;

// What the analysis needs to know beyond the samples.
struct Settings {
  // The smallest change worth acting on, in %: FASTER and SLOWER need a change beyond it,
  // WITHIN_NOISE an interval inside it.
  double min_effect_pct = kDefaultMinEffectPct;
  // Error rate of the verdicts: family-wise (Holm) or false-discovery (BH) rate of false
  // FASTER/SLOWER point verdicts; intervals are at confidence 1 − alpha.
  double alpha = kDefaultAlpha;
  int min_rounds = kDefaultMinRounds;          // the first look; fewer rounds: no verdict
  int max_rounds = kDefaultMaxRounds;          // the last look: the round budget per point
  double time_budget_s = kDefaultTimeBudgetS;  // wall-time budget per sweep point
  std::uint64_t seed = kDefaultSeed;           // of the arms' order in each round
  Correction correction = Correction::kHolm;
  CorrectionFamily family = CorrectionFamily::kEachVariant;
};

// The smallest min_rounds that validate accepts: a trimmed mean with at least one degree of
// freedom left after trimming.
inline constexpr int kMinRounds = 3;

// Throws std::invalid_argument naming the first setting out of range.
void validate(const Settings& settings);

// One arm's samples at one sweep point, indexed by round. std::nullopt where the round's
// sample was discarded upstream (e.g. taken while the clock was throttled); an arm may also
// have fewer rounds than another. Values are in the metric's units and must be > 0.
using RoundSamples = std::vector<std::optional<double>>;

// ln(treatment / control) of each round in which both arms have a sample, indexed by round
// (nullopt where either is missing), on throughputs: latencies are inverted first. Throws
// std::invalid_argument on a sample that is not finite and > 0.
std::vector<std::optional<double>> paired_log_ratios(const RoundSamples& treatment,
                                                     const RoundSamples& control,
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

// A change on the log scale: the trimmed mean of paired log ratios and its standard error.
struct LogChange {
  int rounds = 0;
  double estimate = std::numeric_limits<double>::quiet_NaN();
  double standard_error = std::numeric_limits<double>::infinity();
  int degrees_of_freedom = 0;  // 0: too few rounds for an interval or a test

  bool testable() const { return degrees_of_freedom > 0 && standard_error > 0; }
};

// The `trim`-trimmed mean of the values and its Tukey-McLaughlin standard error. trim = 0 is
// the mean with the usual standard error.
LogChange trimmed_log_change(std::span<const double> log_ratios, double trim = kTrimFraction);

// What a comparison of two arms at one sweep point found, in %.
struct Change {
  int paired_rounds = 0;
  double change_pct = std::numeric_limits<double>::quiet_NaN();  // NaN without paired rounds
  Interval interval_pct;  // at confidence 1 − alpha; infinite without a testable estimate
  double standard_error_log = std::numeric_limits<double>::infinity();  // of ln(ratio)
  int degrees_of_freedom = 0;

  double half_width_pct() const { return interval_pct.half_width(); }
};

Change change_of(const LogChange& log_change, double alpha);

// The thresholds ±T % on the log scale: ln(1 + T/100) and ln(1 − T/100) (−∞ for T ≥ 100).
struct LogThresholds {
  double up = 0;
  double down = 0;
};
LogThresholds log_thresholds(double threshold_pct);

// Two-sided tests at one look, consistent with the 1 − α interval (each side at α / 2):
//   p_beyond: of H0 "|change| ≤ T": 2 · min(P(change > T side), P(change < −T side)); below
//             α exactly when the 1 − α interval lies wholly above +T or below −T;
//   p_within: of H0 "|change| ≥ T": 2 · max of the two one-sided tests (TOST); below α
//             exactly when the 1 − α interval lies inside (−T, +T).
// 1 when the estimate is not testable.
double p_beyond(const LogChange& change, double threshold_pct);
double p_within(const LogChange& change, double threshold_pct);

// ---- Repeated looks --------------------------------------------------------------------------

struct Look {
  int rounds = 0;
  double alpha_share = 0;  // w_j: the shares of all looks sum to 1
};

// The round counts of the looks: min_rounds, 2 · min_rounds, 4 · min_rounds, ... while below
// max_rounds, then max_rounds.
std::vector<int> look_round_counts(const Settings& settings);

// The looks with their shares of α, from the Lan-DeMets O'Brien-Fleming-type spending function
// α(t) = 2 − 2 Φ(z_{α/2} / √t) at t = rounds / max_rounds: w_j = (α(t_j) − α(t_{j−1})) / α.
std::vector<Look> look_schedule(const Settings& settings);

// The share of a look after `rounds` rounds: a scheduled look's own; a point that ended
// between looks (its time budget, not its data, decided when) takes the share of the next
// scheduled look, which it will never reach. 0 before the first look.
double look_share(const std::vector<Look>& schedule, int rounds);

// The look-adjusted p-value of a comparison over its looks: min_j p_j / w_j, capped at 1.
double adjusted_over_looks(std::span<const double> p_values, std::span<const double> shares);

// ---- Planning --------------------------------------------------------------------------------

// The level at which one point's FASTER/SLOWER test must pass at its last look to survive the
// correction whatever the other points do: α · w_last / family size (Bonferroni, the strictest
// Holm step), two-sided. Planning at this level errs on the side of enough rounds.
double planning_level(const Settings& settings, int family_size);

// The paired rounds at which an estimate `margin_log` away from a boundary is resolved with
// probability kPlanningPower at noise sd_log, by a two-sided test at `level`:
// ((z_{level/2} + z_{power}) · sd_log / margin_log)². nullopt for a margin or noise ≤ 0.
std::optional<double> rounds_to_resolve(double sd_log, double margin_log, double level);

// Paired rounds for a point to detect a true change of effect_pct beyond the threshold with
// probability kPlanningPower, at noise sd_log (the standard deviation of one paired log
// ratio, divided by √(the estimator's efficiency)): ((z_{level/2} + z_{power}) · sd_log /
// |ln(1 + effect) − ln(1 ± T)|)². nullopt when the effect does not exceed the threshold.
std::optional<int> rounds_for_power(double sd_log, double effect_pct, double threshold_pct,
                                    double level);

// The smallest change (in %, positive) that `rounds` paired rounds at noise sd_log detect
// with probability kPlanningPower: the minimum detectable effect.
double minimum_detectable_effect_pct(double sd_log, int rounds, double threshold_pct,
                                     double level);

// ---- Multiplicity ----------------------------------------------------------------------------

// Multiplicity-adjusted p-values, in the input's order. Compare each with α.
//   Holm:  sort ascending; adjusted p(k) = max over j ≤ k of min(1, (m − j + 1) · p(j)).
//   BH:    sort ascending; adjusted p(k) = min over j ≥ k of min(1, m / j · p(j)).
std::vector<double> adjust_p_values(std::span<const double> p_values, Correction correction);

// The paragraph the report prints under its verdicts: which correction, over which family,
// which rate it keeps at which α, and why that method.
std::string correction_method_note(const Settings& settings);

// Upper quantiles: the z with P(Z > z) = upper_tail for a standard normal Z, and the t with
// P(T > t) = upper_tail for Student's t with `degrees_of_freedom`; 0 < upper_tail < 1.
double normal_upper_quantile(double upper_tail);
double student_t_upper_quantile(double upper_tail, int degrees_of_freedom);

}  // namespace mlalab::ab
