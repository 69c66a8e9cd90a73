#pragma once
// Verdicts of an A/B sweep: per sweep point, per variant across the sweep, dips in the
// throughput curves, and when to stop measuring a point. Pure functions of the samples, on top
// of stats.h; no CUDA.
//
// The arms at every sweep point: the baseline twice, as two separate arms A and A′ measured in
// every round, and each variant once. Each variant is compared against A (stats.h: the trimmed
// mean of paired log ratios, at each look of the point, adjusted for the looks).
//
// The threshold is the user's: T = min_effect_pct, the smallest change worth acting on.
//
// The A/A comparison is a check of the measurement, not a margin. A′ against A changes
// nothing by construction, so an A/A change significantly beyond T (its look-adjusted test at
// α) means the design did not cancel what it should have (an order effect, a noisy neighbour,
// a drift): the point is flagged and its verdicts withheld, with that reason. Its interval is
// still reported at every point, and its half-width is the noise band the dips are judged by.
//
// Point verdicts, first match wins:
//   WITHHELD      the point's A/A check failed
//   FASTER        the change is beyond +T: its look-adjusted test of "|change| ≤ T" stays
//                 significant after the multiplicity correction (the interval at that level
//                 lies wholly above +T)
//   SLOWER        the same below −T
//   WITHIN_NOISE  the change is within ±T (its look-adjusted equivalence test, TOST, at α: the
//                 interval lies inside ±T) and the 95 % interval contains 0: no change seen
//   SMALL_CHANGE  within ±T as above, but the interval excludes 0: a real change, smaller
//                 than what matters ("−1.0 % [−1.5, −0.3], below the 2 % that matters")
//   AMBIGUOUS     neither: the interval straddles ±T, or fewer than min_rounds paired rounds.
//                 It carries the rounds that would settle it, from the same model as planning.
// Never WITHIN_NOISE for an interval that reaches beyond ±T, and never for one that excludes
// 0: a user reads "within noise" as "no change".
//
// Multiplicity. A 9-point sweep tested point by point at α = 5 % could call some point FASTER
// or SLOWER in up to 1 − 0.95^9 = 37 % of experiments in which nothing changed. The p-values
// of a family (the points of one variant, by default) are therefore adjusted by Holm (the
// default) or Benjamini-Hochberg before any is compared with α; see correction_method_note()
// for the reasoning the report prints. Equivalence (WITHIN_NOISE, SMALL_CHANGE) is not
// corrected: it adds no false FASTER or SLOWER.
//
// Variant verdicts, first match wins:
//   MIXED         FASTER at some points and SLOWER at others; both lists are returned, which
//                 is what a batch-size-aware config key exploits. Before REJECTED: a variant
//                 that wins somewhere is still worth a config entry for those points.
//   REJECTED      SLOWER at some point, FASTER at none
//   ACCEPTED      FASTER at some point, SLOWER at none (other points do not block it; they are
//                 listed in the points)
//   INCONCLUSIVE  no point FASTER or SLOWER
#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
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

enum class PointVerdict { kFaster, kSlower, kSmallChange, kWithinNoise, kAmbiguous, kWithheld };
enum class VariantVerdict { kAccepted, kRejected, kInconclusive, kMixed };

std::string_view to_string(PointVerdict verdict);    // "FASTER", "SLOWER", ...
std::string_view to_string(VariantVerdict verdict);  // "ACCEPTED", "REJECTED", ...

// One comparison at one sweep point over its looks (stats.h, "Repeated looks").
struct SequentialComparison {
  Change change;          // at the last look: every paired round of the point
  int looks = 0;          // looks analysed, the last one included
  double p_beyond = 1;    // of "|change| ≤ T", adjusted for the looks
  double p_within = 1;    // of "|change| ≥ T", adjusted for the looks
};

// The noise at one sweep point, from the A/A comparison, and its check.
struct PointNoise {
  int concurrency = 0;
  Change a_a;  // A′ against A
  // The band: max(|lower|, |upper|) of the A/A interval, in %: the largest change that the
  // A/A comparison does not rule out. Dips in the throughput curves must exceed it.
  double band_pct = 0;
  double baseline_median = 0;  // arm A, all its samples at this point, in the metric's units
  double p_check = 1;          // the A/A comparison's look-adjusted p of "|change| ≤ T"
  bool flagged = false;        // p_check ≤ α: the point's verdicts are withheld
};

// What one variant's comparison at one sweep point needs for a verdict.
struct PointEvidence {
  Change change;             // the variant against A, at the last look
  double threshold_pct = 0;  // T = min_effect_pct
  double p_value = 1;        // of "|change| ≤ T", adjusted for the looks
  double p_adjusted = 1;     // the same after the correction over its family
  double p_within = 1;       // of "|change| ≥ T", adjusted for the looks (equivalence)
  int looks = 0;
  // The smallest change this point's rounds could have detected (FASTER or SLOWER) with
  // probability kPlanningPower at its noise: what an INCONCLUSIVE cannot rule out.
  double mde_pct = std::numeric_limits<double>::infinity();
};

struct PointJudgement {
  PointVerdict verdict = PointVerdict::kAmbiguous;
  // AMBIGUOUS only: the paired rounds in all that would settle the point with probability
  // kPlanningPower if the estimate is where it now is, from the planning model (stats.h,
  // rounds_for_power): beyond the threshold, to pass the test at the planning level; inside
  // it, to fit within ±T. Less than the rounds run when the point was cut short before its
  // min_rounds. std::nullopt when the estimate sits on the threshold, where no number of
  // rounds is expected to settle it, or when it would take over a million rounds.
  std::optional<int> rounds_to_settle;
};

// The verdict at one point from its evidence, as described at the top of this file;
// planning_level is stats.h's for the point's family.
PointJudgement judge_point(const PointEvidence& evidence, bool withheld, const Settings& settings,
                           double planning_level);

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
  std::vector<Look> looks;              // look_schedule(settings)
};

// The rounds run at a point: the longest arm's round count (a round whose samples were all
// discarded still counts).
int rounds_run(const PointSamples& point);

// The size of one family of the correction: the sweep's points, or points × variants.
int family_size(const Settings& settings, int points, int variants);

// One comparison of a point over its looks: treatment against control, with `rounds` rounds
// run at the point (looks at the scheduled round counts up to it, and at `rounds` itself).
SequentialComparison compare_over_looks(const RoundSamples& treatment, const RoundSamples& control,
                                        Direction direction, int rounds, const Settings& settings);

// The whole analysis. A point's numbers depend on its own samples only, except for the
// correction across its family. Throws std::invalid_argument on invalid settings, duplicate
// concurrencies, a variant count that does not match the names, or a sample that is not a
// positive finite number.
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
// Stopping: when has a sweep point been measured enough?

inline constexpr std::string_view kAaComparisonName = "A/A";

// What a stopping rule sees after each round at one sweep point.
struct PointState {
  int rounds = 0;        // rounds run, including those whose samples were discarded
  double elapsed_s = 0;  // wall time spent measuring this point
  bool at_look = false;  // rounds is one of look_schedule's
  // At a look only: the A/A comparison, then each variant's, named (kAaComparisonName or the
  // variant's name).
  std::vector<std::pair<std::string, SequentialComparison>> comparisons;
};

enum class StopReason {
  kKeepGoing,         // not yet
  kSettled,           // at a look, every variant's comparison settled
  kAaCheckFailed,     // at a look, the A/A comparison moved beyond ±T
  kRoundBudgetSpent,  // max_rounds reached
  kTimeBudgetSpent,   // time_budget_s reached
};

struct StopDecision {
  StopReason reason = StopReason::kKeepGoing;
  // For the log, e.g. "settled at the look after 20 rounds: 8 warps beyond ±2 % (p 3e-09),
  // 3 stages within ±2 % (p 1e-04)".
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
//   1. the round budget: max_rounds rounds run (the last look);
//   2. the time budget: time_budget_s spent, even before min_rounds (a budget is a promise to
//      the user; the verdicts will then say AMBIGUOUS);
//   3. at a look, the A/A check failed (its verdicts will be withheld: more rounds cannot
//      mend the design);
//   4. at a look, every variant settled: beyond ±T at the level that survives the correction
//      whatever the other points do (p ≤ α / family size), or within ±T (p_within ≤ α).
// Only at looks, with the looks' shares of α: a rule that looked after every round at
// intervals of nominal level would stop on a lucky narrow interval.
class SequentialStoppingRule final : public StoppingRule {
 public:
  SequentialStoppingRule(const Settings& settings, int family_size);
  StopDecision decide(const PointState& state) const override;

 private:
  Settings settings_;
  int family_size_;
};

// The state of one point of a sweep in progress: its rounds so far (the longest arm's round
// count) and, at a look, each comparison computed as analyze_sweep computes it.
PointState point_state(const SweepSamples& samples, std::size_t point_index, double elapsed_s,
                       const Settings& settings);

}  // namespace mlalab::ab
