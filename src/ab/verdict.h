#pragma once
// Verdicts of an A/B sweep: per sweep point, per variant across the sweep, dips in the
// throughput curves, and when to stop measuring a point. Pure functions of the samples, on top
// of stats.h; no CUDA.
//
// The arms at every sweep point: the baseline twice, as two separate arms A and A′ measured in
// every round, and each variant once. A′ against A is an A/A comparison: the change it shows
// is noise by construction, so its interval measures how large a change noise alone produces
// at this point. Each variant is compared against A with the same statistic (stats.h).
//
// Point verdicts. With the threshold T = max(A/A band, min_effect_pct):
//   FASTER        the variant's interval lies wholly above +T, and the test of "|change| ≤ T"
//                 stays significant after the multiplicity correction
//   SLOWER        the same below −T
//   WITHIN_NOISE  the interval lies wholly inside (−T, +T): any change is smaller than what
//                 noise or indifference allows (an equivalence claim, at the interval's own
//                 confidence; it is not corrected for multiplicity, as it adds no false
//                 FASTER or SLOWER)
//   AMBIGUOUS     neither, or fewer than min_rounds paired rounds; carries an estimate of the
//                 rounds that would settle it
//
// Requiring both the test and the band makes the verdicts conservative: a change must clear
// the band, itself about an interval's half-width plus the A/A offset, by another half-width.
// In simulation (tests/ab/verdict_test.cpp) false FASTER/SLOWER verdicts are far rarer than α,
// and a change is called reliably once it is about three interval half-widths.
//
// Multiplicity. A 9-point sweep tested point by point at α = 5 % could call some point FASTER
// or SLOWER in up to 1 − 0.95^9 = 37 % of experiments in which nothing changed. The p-values
// of a family (the points of one variant, by default) are therefore adjusted by Holm (the
// default) or Benjamini-Hochberg before any is compared with α; see correction_method_note()
// for the reasoning the report prints.
//
// Variant verdicts, first match wins:
//   MIXED         FASTER at some points and SLOWER at others; both lists are returned, which
//                 is what a batch-size-aware config key exploits. Before REJECTED: a variant
//                 that wins somewhere is still worth a config entry for those points.
//   REJECTED      SLOWER at some point, FASTER at none
//   ACCEPTED      FASTER at some point, SLOWER at none (AMBIGUOUS points do not block it;
//                 they are listed in the points)
//   INCONCLUSIVE  no point FASTER or SLOWER
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ab/stats.h"

namespace mlalab::ab {

// ---------------------------------------------------------------------------------------------
// Samples in

// All arms' samples at one sweep point, indexed by round (see RoundSamples).
struct PointSamples {
  int concurrency = 0;
  RoundSamples baseline;         // arm A
  RoundSamples baseline_repeat;  // arm A′: the baseline again, as its own arm in every round
  std::vector<RoundSamples> variants;  // one per SweepSamples::variant_names, same order
};

struct SweepSamples {
  Direction direction = Direction::kHigherIsBetter;
  std::vector<std::string> variant_names;
  std::vector<PointSamples> points;  // any order; concurrencies distinct
};

// ---------------------------------------------------------------------------------------------
// Verdicts out

enum class PointVerdict { kFaster, kSlower, kWithinNoise, kAmbiguous };
enum class VariantVerdict { kAccepted, kRejected, kInconclusive, kMixed };

std::string_view to_string(PointVerdict verdict);    // "FASTER", "SLOWER", ...
std::string_view to_string(VariantVerdict verdict);  // "ACCEPTED", "REJECTED", ...

// The noise at one sweep point, from the A/A comparison.
struct PointNoise {
  int concurrency = 0;
  Change a_a;  // A′ against A
  // The band: max(|lower|, |upper|) of the A/A interval, in %. The largest change that the
  // A/A comparison does not rule out, i.e. what noise alone can produce here; it includes
  // any offset between A and A′ (an order or warm-up effect) as well as the spread.
  double band_pct = 0;
  double baseline_median = 0;  // arm A, all its samples at this point, in the metric's units
};

// What one variant's comparison at one sweep point needs for a verdict.
struct PointEvidence {
  Change change;             // the variant against A
  double threshold_pct = 0;  // T = max(band, min_effect_pct)
  double p_value = 1;        // of "|change| ≤ T" (BootstrapDistribution::p_beyond)
  double p_adjusted = 1;     // the same after the correction over its family
};

struct PointJudgement {
  PointVerdict verdict = PointVerdict::kAmbiguous;
  // AMBIGUOUS only: roughly how many more rounds would settle the point, assuming the
  // estimate stays where it is and the interval's half-width h shrinks as 1/√rounds, so that
  // n · (h / h_needed)² rounds are needed in all, where h_needed is
  //   (|change| − T) · z(α/2) / z(α_c/2) when the estimate lies beyond T, with α_c =
  //     α · p / p_adjusted the level the correction leaves this point and z the normal upper
  //     quantile: the interval at confidence 1 − α_c would then clear T;
  //   T − |change| when it lies inside: the interval would then fit within ±T.
  // At least the rounds missing to min_rounds. std::nullopt when the estimate sits on the
  // threshold, where no number of rounds is expected to settle it, or when it would take over
  // a million rounds. Optimistic in that the estimate will move, pessimistic in that the band
  // shrinks with more rounds too.
  std::optional<int> more_rounds;
};

// The verdict at one point from its evidence, as described at the top of this file.
PointJudgement judge_point(const PointEvidence& evidence, const Settings& settings);

struct PointResult {
  int concurrency = 0;
  PointEvidence evidence;
  PointJudgement judgement;
  double variant_median = 0;  // all the variant's samples at this point, in the metric's units
};

struct VariantResult {
  std::string name;
  VariantVerdict verdict = VariantVerdict::kInconclusive;
  std::vector<int> faster_at;       // concurrencies with a FASTER point verdict, ascending
  std::vector<int> slower_at;       // concurrencies with a SLOWER point verdict, ascending
  std::vector<PointResult> points;  // ascending concurrency
};

// The variant verdict from its point verdicts (see the top of this file).
VariantResult summarize_variant(std::string name, std::vector<PointResult> points);

struct SweepResult {
  Direction direction = Direction::kHigherIsBetter;
  std::vector<PointNoise> noise;        // ascending concurrency
  std::vector<VariantResult> variants;  // in SweepSamples::variant_names' order
  std::string correction_note;          // correction_method_note(settings)
};

// The whole analysis. Bootstrap streams are keyed by concurrency and arm, so a point's numbers
// do not depend on which other points are in the sweep. Throws std::invalid_argument on
// invalid settings, duplicate concurrencies, a variant count that does not match the names, or
// a sample that is not a positive finite number.
SweepResult analyze_sweep(const SweepSamples& samples, const Settings& settings);

// ---------------------------------------------------------------------------------------------
// Monotonicity: more concurrent requests should never give less total throughput

struct CurvePoint {
  int concurrency = 0;
  double median_throughput = 0;
  double band_pct = 0;  // the noise band at this concurrency (PointNoise::band_pct)
};

struct ArmCurve {
  std::string arm;
  std::vector<CurvePoint> points;  // any order; sorted by concurrency before use
};

struct Dip {
  std::string arm;
  int from_concurrency = 0;
  int to_concurrency = 0;  // the next concurrency measured
  double dip_pct = 0;      // (1 − to / from) · 100: how much throughput was lost, > band_pct
  double band_pct = 0;     // the larger band of the two points, which the dip exceeds
};

// Every step from one concurrency to the next at which an arm's median throughput falls by
// more than the noise band. The larger of the two points' bands applies: a dip must stand out
// of the noise at both ends to be more than noise. Throws std::invalid_argument on a repeated
// concurrency or a throughput that is not positive.
std::vector<Dip> find_dips(const std::vector<ArmCurve>& curves);

// The baseline's (named "baseline") and each variant's curve from a throughput sweep. Throws
// std::invalid_argument for a latency sweep, where no monotone shape is expected.
std::vector<ArmCurve> throughput_curves(const SweepResult& result);

// ---------------------------------------------------------------------------------------------
// Adaptive stopping: when has a sweep point been measured enough?

inline constexpr std::string_view kAaComparisonName = "A/A";

// How precise one comparison at a point is so far.
struct ComparisonPrecision {
  std::string name;  // kAaComparisonName, or the variant's name
  int paired_rounds = 0;
  double half_width_pct = std::numeric_limits<double>::infinity();
};

// What a stopping rule sees after each round at one sweep point.
struct PointState {
  int rounds = 0;        // rounds run, including those whose samples were discarded
  double elapsed_s = 0;  // wall time spent measuring this point
  std::vector<ComparisonPrecision> comparisons;  // the A/A comparison, then each variant's
};

enum class StopReason {
  kKeepGoing,         // not yet
  kPrecisionReached,  // every interval narrower than the minimum effect
  kRoundBudgetSpent,  // max_rounds reached
  kTimeBudgetSpent,   // time_budget_s reached
};

struct StopDecision {
  StopReason reason = StopReason::kKeepGoing;
  // For the log, e.g. "every interval's half-width ≤ ±1.7 %, below the 2 % minimum effect,
  // after 31 rounds".
  std::string text;

  bool stop() const { return reason != StopReason::kKeepGoing; }
};

std::string_view to_string(StopReason reason);

// A stopping rule is a type: the measuring loop asks it after every round and stops the point
// when it says so.
class StoppingRule {
 public:
  virtual ~StoppingRule() = default;
  virtual StopDecision decide(const PointState& state) const = 0;
};

// The default rule, in order of precedence:
//   1. precision: at least min_rounds rounds run and every comparison's interval half-width
//      below min_effect_pct, so each is resolved finely enough to tell the minimum effect
//      apart from none (needs at least one comparison);
//   2. the round budget: max_rounds rounds run;
//   3. the time budget: time_budget_s spent, even before min_rounds (a budget is a promise to
//      the user; the verdicts will then say AMBIGUOUS).
// It looks at the intervals' widths only, never at their positions: stopping once a result
// looks significant would inflate the false-positive rate, stopping on precision does not.
class PrecisionStoppingRule final : public StoppingRule {
 public:
  explicit PrecisionStoppingRule(const Settings& settings);
  StopDecision decide(const PointState& state) const override;

 private:
  double min_effect_pct_;
  int min_rounds_;
  int max_rounds_;
  double time_budget_s_;
};

// The state of one point of a sweep in progress: its rounds so far (the longest arm's round
// count) and the precision of each comparison, computed as analyze_sweep would.
PointState point_state(const SweepSamples& samples, std::size_t point_index, double elapsed_s,
                       const Settings& settings);

}  // namespace mlalab::ab
