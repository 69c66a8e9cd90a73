#include "ab/verdict.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <stdexcept>

namespace mlalab::ab {
namespace {

constexpr double kPercent = 100.0;
// Past this many rounds an estimate is no longer advice: more_rounds says "no finite number".
constexpr double kMostRoundsWorthEstimating = 1e6;
// Bootstrap streams: the A/A comparison is stream 0 of its point, variant v is stream v + 1.
constexpr std::uint32_t kAaStream = 0;

std::uint32_t variant_stream(std::size_t variant) {
  return static_cast<std::uint32_t>(variant + 1);
}

// The treatment's change against arm A at one point, with the stream keyed by the point's
// concurrency and the comparison, so that analyze_sweep and point_state agree.
ChangeEstimate estimate_against_baseline(const SweepSamples& sweep, const PointSamples& point,
                                         std::uint32_t stream, const Settings& settings) {
  const RoundSamples& treatment =
      stream == kAaStream ? point.baseline_repeat : point.variants[stream - 1];
  const std::array<std::uint32_t, 2> key = {static_cast<std::uint32_t>(point.concurrency), stream};
  return estimate_change(pair_rounds(treatment, point.baseline, sweep.direction), settings, key);
}

void check_arm(const RoundSamples& samples, int concurrency, std::string_view arm) {
  for (std::size_t round = 0; round < samples.size(); ++round) {
    const auto& sample = samples[round];
    if (sample && !(std::isfinite(*sample) && *sample > 0)) {
      throw std::invalid_argument(
          fmt::format("concurrency {}, arm {}, round {}: sample {} is not a positive finite number",
                      concurrency, arm, round, *sample));
    }
  }
}

void check_point(const SweepSamples& sweep, const PointSamples& point) {
  if (point.variants.size() != sweep.variant_names.size()) {
    throw std::invalid_argument(fmt::format("concurrency {}: {} variant arms for {} names",
                                            point.concurrency, point.variants.size(),
                                            sweep.variant_names.size()));
  }
  check_arm(point.baseline, point.concurrency, "A");
  check_arm(point.baseline_repeat, point.concurrency, "A'");
  for (std::size_t v = 0; v < point.variants.size(); ++v) {
    check_arm(point.variants[v], point.concurrency, sweep.variant_names[v]);
  }
}

void check_sweep(const SweepSamples& sweep) {
  std::set<int> concurrencies;
  for (const PointSamples& point : sweep.points) {
    if (!concurrencies.insert(point.concurrency).second) {
      throw std::invalid_argument(fmt::format("concurrency {} appears twice", point.concurrency));
    }
    check_point(sweep, point);
  }
}

// The rounds an AMBIGUOUS point would need (see PointJudgement::more_rounds).
std::optional<int> more_rounds_to_settle(const PointEvidence& evidence, const Settings& settings) {
  const Change& change = evidence.change;
  const int missing_to_minimum = settings.min_rounds - change.paired_rounds;
  if (missing_to_minimum > 0) return missing_to_minimum;

  const double distance = std::abs(change.change_pct) - evidence.threshold_pct;
  double needed_half_width = -distance;
  if (distance > 0) {
    // To be called FASTER or SLOWER the point must pass its test at the level the correction
    // leaves it, α · p / p_adjusted; the interval at that level is wider than the nominal one
    // by the ratio of the normal quantiles.
    const double corrected_alpha = settings.alpha * evidence.p_value / evidence.p_adjusted;
    needed_half_width = distance * normal_upper_quantile(settings.alpha / 2) /
                        normal_upper_quantile(corrected_alpha / 2);
  }
  if (!(needed_half_width > 0)) return std::nullopt;

  const double ratio = change.half_width_pct() / needed_half_width;
  const double rounds_needed = change.paired_rounds * ratio * ratio;
  if (!(rounds_needed <= kMostRoundsWorthEstimating)) return std::nullopt;
  return std::max(1, static_cast<int>(std::ceil(rounds_needed)) - change.paired_rounds);
}

}  // namespace

std::string_view to_string(PointVerdict verdict) {
  switch (verdict) {
    case PointVerdict::kFaster:
      return "FASTER";
    case PointVerdict::kSlower:
      return "SLOWER";
    case PointVerdict::kWithinNoise:
      return "WITHIN_NOISE";
    case PointVerdict::kAmbiguous:
      return "AMBIGUOUS";
  }
  return "unknown point verdict";
}

std::string_view to_string(VariantVerdict verdict) {
  switch (verdict) {
    case VariantVerdict::kAccepted:
      return "ACCEPTED";
    case VariantVerdict::kRejected:
      return "REJECTED";
    case VariantVerdict::kInconclusive:
      return "INCONCLUSIVE";
    case VariantVerdict::kMixed:
      return "MIXED";
  }
  return "unknown variant verdict";
}

std::string_view to_string(StopReason reason) {
  switch (reason) {
    case StopReason::kKeepGoing:
      return "keep going";
    case StopReason::kPrecisionReached:
      return "precision reached";
    case StopReason::kRoundBudgetSpent:
      return "round budget spent";
    case StopReason::kTimeBudgetSpent:
      return "time budget spent";
  }
  return "unknown stop reason";
}

PointJudgement judge_point(const PointEvidence& evidence, const Settings& settings) {
  const Change& change = evidence.change;
  const Interval& interval = change.interval_pct;
  const double threshold = evidence.threshold_pct;
  if (change.paired_rounds >= settings.min_rounds) {
    if (evidence.p_adjusted <= settings.alpha) {
      if (interval.lower > threshold)
        return {.verdict = PointVerdict::kFaster, .more_rounds = std::nullopt};
      if (interval.upper < -threshold)
        return {.verdict = PointVerdict::kSlower, .more_rounds = std::nullopt};
    }
    if (interval.lower > -threshold && interval.upper < threshold) {
      return {.verdict = PointVerdict::kWithinNoise, .more_rounds = std::nullopt};
    }
  }
  return {.verdict = PointVerdict::kAmbiguous,
          .more_rounds = more_rounds_to_settle(evidence, settings)};
}

VariantResult summarize_variant(std::string name, std::vector<PointResult> points) {
  std::sort(points.begin(), points.end(), [](const PointResult& a, const PointResult& b) {
    return a.concurrency < b.concurrency;
  });
  VariantResult result;
  result.name = std::move(name);
  result.points = std::move(points);
  for (const PointResult& point : result.points) {
    if (point.judgement.verdict == PointVerdict::kFaster)
      result.faster_at.push_back(point.concurrency);
    if (point.judgement.verdict == PointVerdict::kSlower)
      result.slower_at.push_back(point.concurrency);
  }
  const bool faster = !result.faster_at.empty();
  const bool slower = !result.slower_at.empty();
  if (faster && slower) {
    result.verdict = VariantVerdict::kMixed;
  } else if (slower) {
    result.verdict = VariantVerdict::kRejected;
  } else if (faster) {
    result.verdict = VariantVerdict::kAccepted;
  } else {
    result.verdict = VariantVerdict::kInconclusive;
  }
  return result;
}

SweepResult analyze_sweep(const SweepSamples& samples, const Settings& settings) {
  validate(settings);
  check_sweep(samples);

  std::vector<const PointSamples*> points;
  for (const PointSamples& point : samples.points) points.push_back(&point);
  std::sort(points.begin(), points.end(), [](const PointSamples* a, const PointSamples* b) {
    return a->concurrency < b->concurrency;
  });

  SweepResult result;
  result.direction = samples.direction;
  result.correction_note = correction_method_note(settings);
  const std::size_t variant_count = samples.variant_names.size();
  // by_variant[v][i]: variant v at the i-th point, in ascending concurrency.
  std::vector<std::vector<PointResult>> by_variant(variant_count);
  for (const PointSamples* point : points) {
    const Change a_a = estimate_against_baseline(samples, *point, kAaStream, settings).change;
    const double band =
        std::max(std::abs(a_a.interval_pct.lower), std::abs(a_a.interval_pct.upper));
    result.noise.push_back({.concurrency = point->concurrency,
                            .a_a = a_a,
                            .band_pct = band,
                            .baseline_median = median_of(point->baseline)});

    const double threshold = std::max(band, settings.min_effect_pct);
    for (std::size_t v = 0; v < variant_count; ++v) {
      const ChangeEstimate estimate =
          estimate_against_baseline(samples, *point, variant_stream(v), settings);
      // Too few rounds for a verdict: in the family with p = 1, so that it still counts as a
      // test (m does not shrink when a point is cut short) but can never be rejected.
      const bool enough_rounds = estimate.change.paired_rounds >= settings.min_rounds;
      const double p_value = enough_rounds ? estimate.distribution.p_beyond(threshold) : 1.0;
      by_variant[v].push_back({.concurrency = point->concurrency,
                               .evidence = {.change = estimate.change,
                                            .threshold_pct = threshold,
                                            .p_value = p_value,
                                            .p_adjusted = 1.0},  // set by the correction below
                               .judgement = {},
                               .variant_median = median_of(point->variants[v])});
    }
  }

  // The correction: each family's p-values adjusted together.
  auto adjust = [&](std::vector<PointEvidence*> family) {
    std::vector<double> p_values;
    for (const PointEvidence* evidence : family) p_values.push_back(evidence->p_value);
    const std::vector<double> adjusted = adjust_p_values(p_values, settings.correction);
    for (std::size_t i = 0; i < family.size(); ++i) family[i]->p_adjusted = adjusted[i];
  };
  std::vector<PointEvidence*> sweep_family;
  for (auto& variant_points : by_variant) {
    std::vector<PointEvidence*> variant_family;
    for (PointResult& point : variant_points) variant_family.push_back(&point.evidence);
    if (settings.family == CorrectionFamily::kEachVariant) {
      adjust(variant_family);
    } else {
      sweep_family.insert(sweep_family.end(), variant_family.begin(), variant_family.end());
    }
  }
  if (settings.family == CorrectionFamily::kWholeSweep) adjust(sweep_family);

  for (std::size_t v = 0; v < variant_count; ++v) {
    for (PointResult& point : by_variant[v])
      point.judgement = judge_point(point.evidence, settings);
    result.variants.push_back(
        summarize_variant(samples.variant_names[v], std::move(by_variant[v])));
  }
  return result;
}

std::vector<Dip> find_dips(const std::vector<ArmCurve>& curves) {
  std::vector<Dip> dips;
  for (const ArmCurve& curve : curves) {
    std::vector<CurvePoint> points = curve.points;
    std::sort(points.begin(), points.end(), [](const CurvePoint& a, const CurvePoint& b) {
      return a.concurrency < b.concurrency;
    });
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (!(points[i].median_throughput > 0)) {
        throw std::invalid_argument(fmt::format("{} at concurrency {}: throughput {} is not > 0",
                                                curve.arm, points[i].concurrency,
                                                points[i].median_throughput));
      }
      if (i == 0) continue;
      const CurvePoint& from = points[i - 1];
      const CurvePoint& to = points[i];
      if (from.concurrency == to.concurrency) {
        throw std::invalid_argument(
            fmt::format("{}: concurrency {} appears twice", curve.arm, to.concurrency));
      }
      const double dip = (1 - to.median_throughput / from.median_throughput) * kPercent;
      const double band = std::max(from.band_pct, to.band_pct);
      if (dip > band) {
        dips.push_back({.arm = curve.arm,
                        .from_concurrency = from.concurrency,
                        .to_concurrency = to.concurrency,
                        .dip_pct = dip,
                        .band_pct = band});
      }
    }
  }
  return dips;
}

std::vector<ArmCurve> throughput_curves(const SweepResult& result) {
  if (result.direction != Direction::kHigherIsBetter) {
    throw std::invalid_argument("throughput curves need a throughput sweep, not a latency sweep");
  }
  // A point where an arm has no sample has no median (NaN): it is left out of that curve.
  ArmCurve baseline{.arm = "baseline", .points = {}};
  for (const PointNoise& noise : result.noise) {
    if (!std::isfinite(noise.baseline_median)) continue;
    baseline.points.push_back({.concurrency = noise.concurrency,
                               .median_throughput = noise.baseline_median,
                               .band_pct = noise.band_pct});
  }
  std::vector<ArmCurve> curves = {baseline};
  for (const VariantResult& variant : result.variants) {
    ArmCurve curve{.arm = variant.name, .points = {}};
    // Points and noise are both in ascending concurrency, one entry per sweep point.
    for (std::size_t i = 0; i < variant.points.size(); ++i) {
      if (!std::isfinite(variant.points[i].variant_median)) continue;
      curve.points.push_back({.concurrency = variant.points[i].concurrency,
                              .median_throughput = variant.points[i].variant_median,
                              .band_pct = result.noise[i].band_pct});
    }
    curves.push_back(std::move(curve));
  }
  return curves;
}

PrecisionStoppingRule::PrecisionStoppingRule(const Settings& settings)
    : min_effect_pct_(settings.min_effect_pct),
      min_rounds_(settings.min_rounds),
      max_rounds_(settings.max_rounds),
      time_budget_s_(settings.time_budget_s) {}

StopDecision PrecisionStoppingRule::decide(const PointState& state) const {
  const auto widest =
      std::max_element(state.comparisons.begin(), state.comparisons.end(),
                       [](const ComparisonPrecision& a, const ComparisonPrecision& b) {
                         return a.half_width_pct < b.half_width_pct;
                       });
  const std::string widest_text =
      widest == state.comparisons.end()
          ? std::string("no comparison")
          : fmt::format("widest interval half-width ±{:.2f} % ({})", widest->half_width_pct,
                        widest->name);

  if (state.rounds >= min_rounds_ && widest != state.comparisons.end() &&
      widest->half_width_pct < min_effect_pct_) {
    return {.reason = StopReason::kPrecisionReached,
            .text = fmt::format("every interval's half-width ≤ ±{:.2f} %, below the {:g} % "
                                "minimum effect, after {} rounds",
                                widest->half_width_pct, min_effect_pct_, state.rounds)};
  }
  if (state.rounds >= max_rounds_) {
    return {.reason = StopReason::kRoundBudgetSpent,
            .text = fmt::format("round budget of {} rounds spent; {}", max_rounds_, widest_text)};
  }
  if (state.elapsed_s >= time_budget_s_) {
    return {.reason = StopReason::kTimeBudgetSpent,
            .text = fmt::format("time budget of {:g} s spent after {} rounds; {}", time_budget_s_,
                                state.rounds, widest_text)};
  }
  if (state.rounds < min_rounds_) {
    return {.reason = StopReason::kKeepGoing,
            .text = fmt::format("{} of at least {} rounds", state.rounds, min_rounds_)};
  }
  return {.reason = StopReason::kKeepGoing,
          .text = fmt::format("{} ≥ {:g} % after {} rounds", widest_text, min_effect_pct_,
                              state.rounds)};
}

PointState point_state(const SweepSamples& samples, std::size_t point_index, double elapsed_s,
                       const Settings& settings) {
  validate(settings);
  if (point_index >= samples.points.size()) {
    throw std::invalid_argument(
        fmt::format("point {} of a sweep of {} points", point_index, samples.points.size()));
  }
  const PointSamples& point = samples.points[point_index];
  check_point(samples, point);

  std::size_t rounds = std::max(point.baseline.size(), point.baseline_repeat.size());
  for (const RoundSamples& arm : point.variants) rounds = std::max(rounds, arm.size());
  PointState state{.rounds = static_cast<int>(rounds), .elapsed_s = elapsed_s, .comparisons = {}};
  for (std::uint32_t stream = kAaStream; stream <= point.variants.size(); ++stream) {
    const Change change = estimate_against_baseline(samples, point, stream, settings).change;
    state.comparisons.push_back({.name = stream == kAaStream ? std::string(kAaComparisonName)
                                                             : samples.variant_names[stream - 1],
                                 .paired_rounds = change.paired_rounds,
                                 .half_width_pct = change.half_width_pct()});
  }
  return state;
}

}  // namespace mlalab::ab
