#include "ab/verdict.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <stdexcept>

namespace mlalab::ab {
namespace {

constexpr double kPercent = 100.0;
// Past this many rounds an estimate is no longer advice: rounds_to_settle says "no number".
constexpr double kMostRoundsWorthEstimating = 1e6;

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

// The rounds in all that would settle an AMBIGUOUS point (PointJudgement::rounds_to_settle):
// the planning model at the point's noise, with the estimate where it is.
std::optional<int> rounds_to_settle(const PointEvidence& evidence, const Settings& settings,
                                    double planning_level) {
  const Change& change = evidence.change;
  if (change.paired_rounds < settings.min_rounds) return settings.min_rounds;
  const double sd_log = change.standard_error_log * std::sqrt(change.paired_rounds);
  if (!std::isfinite(sd_log)) return std::nullopt;
  const LogThresholds threshold = log_thresholds(evidence.threshold_pct);
  const double estimate = std::log1p(change.change_pct / kPercent);
  const double distance = std::abs(estimate) - threshold.up;
  // Beyond the threshold: the FASTER/SLOWER test at the planning level; inside it: the interval
  // at the equivalence test's level (α at the last look, not corrected) within ±T.
  const double level = distance > 0 ? planning_level
                                     : settings.alpha * look_schedule(settings).back().alpha_share;
  const auto rounds = rounds_to_resolve(sd_log, std::abs(distance), level);
  if (!rounds || *rounds > kMostRoundsWorthEstimating) return std::nullopt;
  return std::max(settings.min_rounds, static_cast<int>(std::ceil(*rounds)));
}

}  // namespace

std::string_view to_string(PointVerdict verdict) {
  switch (verdict) {
    case PointVerdict::kFaster:
      return "FASTER";
    case PointVerdict::kSlower:
      return "SLOWER";
    case PointVerdict::kSmallChange:
      return "SMALL_CHANGE";
    case PointVerdict::kWithinNoise:
      return "WITHIN_NOISE";
    case PointVerdict::kAmbiguous:
      return "AMBIGUOUS";
    case PointVerdict::kWithheld:
      return "WITHHELD";
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
    case StopReason::kSettled:
      return "settled";
    case StopReason::kAaCheckFailed:
      return "A/A check failed";
    case StopReason::kRoundBudgetSpent:
      return "round budget spent";
    case StopReason::kTimeBudgetSpent:
      return "time budget spent";
  }
  return "unknown stop reason";
}

PointJudgement judge_point(const PointEvidence& evidence, bool withheld, const Settings& settings,
                           double planning_level) {
  if (withheld) return {.verdict = PointVerdict::kWithheld, .rounds_to_settle = std::nullopt};
  const Change& change = evidence.change;
  if (change.paired_rounds >= settings.min_rounds) {
    if (evidence.p_adjusted <= settings.alpha) {
      return {.verdict = change.change_pct > 0 ? PointVerdict::kFaster : PointVerdict::kSlower,
              .rounds_to_settle = std::nullopt};
    }
    if (evidence.p_within <= settings.alpha) {
      return {.verdict = change.interval_pct.contains(0) ? PointVerdict::kWithinNoise
                                                         : PointVerdict::kSmallChange,
              .rounds_to_settle = std::nullopt};
    }
  }
  return {.verdict = PointVerdict::kAmbiguous,
          .rounds_to_settle = rounds_to_settle(evidence, settings, planning_level)};
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

int family_size(const Settings& settings, int points, int variants) {
  return settings.family == CorrectionFamily::kEachVariant ? points : points * variants;
}

SequentialComparison compare_over_looks(const RoundSamples& treatment, const RoundSamples& control,
                                        Direction direction, int rounds, const Settings& settings) {
  const std::vector<std::optional<double>> ratios =
      paired_log_ratios(treatment, control, direction);
  const std::vector<Look> schedule = look_schedule(settings);
  // The looks: every scheduled one the point reached, and the point's last round count if it
  // ended between two (with the share of the next, which it never reached).
  std::vector<int> look_rounds;
  for (const Look& look : schedule) {
    if (look.rounds <= rounds) look_rounds.push_back(look.rounds);
  }
  if (look_rounds.empty() || look_rounds.back() < rounds) look_rounds.push_back(rounds);

  SequentialComparison comparison;
  std::vector<double> beyond;
  std::vector<double> within;
  std::vector<double> shares;
  std::vector<double> values;
  std::size_t next = 0;
  for (const int look : look_rounds) {
    for (; next < ratios.size() && next < static_cast<std::size_t>(look); ++next) {
      if (ratios[next]) values.push_back(*ratios[next]);
    }
    const LogChange change = trimmed_log_change(values);
    beyond.push_back(p_beyond(change, settings.min_effect_pct));
    within.push_back(p_within(change, settings.min_effect_pct));
    shares.push_back(look_share(schedule, look));
    comparison.change = change_of(change, settings.alpha);
  }
  comparison.looks = static_cast<int>(look_rounds.size());
  comparison.p_beyond = adjusted_over_looks(beyond, shares);
  comparison.p_within = adjusted_over_looks(within, shares);
  return comparison;
}

int rounds_run(const PointSamples& point) {
  std::size_t rounds = std::max(point.baseline.size(), point.baseline_repeat.size());
  for (const RoundSamples& arm : point.variants) rounds = std::max(rounds, arm.size());
  return static_cast<int>(rounds);
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
  result.looks = look_schedule(settings);
  const std::size_t variant_count = samples.variant_names.size();
  const double level =
      planning_level(settings, family_size(settings, static_cast<int>(points.size()),
                                           static_cast<int>(variant_count)));
  // by_variant[v][i]: variant v at the i-th point, in ascending concurrency.
  std::vector<std::vector<PointResult>> by_variant(variant_count);
  for (const PointSamples* point : points) {
    const int rounds = rounds_run(*point);
    const SequentialComparison a_a = compare_over_looks(
        point->baseline_repeat, point->baseline, samples.direction, rounds, settings);
    result.noise.push_back(
        {.concurrency = point->concurrency,
         .a_a = a_a.change,
         .band_pct = std::max(std::abs(a_a.change.interval_pct.lower),
                              std::abs(a_a.change.interval_pct.upper)),
         .baseline_median = median_of(point->baseline),
         .p_check = a_a.p_beyond,
         .flagged = a_a.change.paired_rounds >= settings.min_rounds &&
                    a_a.p_beyond <= settings.alpha});

    for (std::size_t v = 0; v < variant_count; ++v) {
      const SequentialComparison comparison = compare_over_looks(
          point->variants[v], point->baseline, samples.direction, rounds, settings);
      const Change& change = comparison.change;
      // Too few rounds for a verdict: in the family with p = 1, so that it still counts as a
      // test (m does not shrink when a point is cut short) but can never be rejected.
      const bool enough_rounds = change.paired_rounds >= settings.min_rounds;
      by_variant[v].push_back(
          {.concurrency = point->concurrency,
           .evidence = {.change = change,
                        .threshold_pct = settings.min_effect_pct,
                        .p_value = enough_rounds ? comparison.p_beyond : 1.0,
                        .p_adjusted = 1.0,  // set by the correction below
                        .p_within = enough_rounds ? comparison.p_within : 1.0,
                        .looks = comparison.looks,
                        .mde_pct = minimum_detectable_effect_pct(
                            change.standard_error_log * std::sqrt(change.paired_rounds),
                            change.paired_rounds, settings.min_effect_pct, level)},
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
    for (std::size_t i = 0; i < by_variant[v].size(); ++i) {
      PointResult& point = by_variant[v][i];
      point.judgement = judge_point(point.evidence, result.noise[i].flagged, settings, level);
    }
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

SequentialStoppingRule::SequentialStoppingRule(const Settings& settings, int family_size)
    : settings_(settings), family_size_(std::max(1, family_size)) {}

StopDecision SequentialStoppingRule::decide(const PointState& state) const {
  if (state.rounds >= settings_.max_rounds) {
    return {.reason = StopReason::kRoundBudgetSpent,
            .text = fmt::format("round budget of {} rounds spent", settings_.max_rounds)};
  }
  if (state.elapsed_s >= settings_.time_budget_s) {
    return {.reason = StopReason::kTimeBudgetSpent,
            .text = fmt::format("time budget of {:g} s spent after {} rounds",
                                settings_.time_budget_s, state.rounds)};
  }
  if (!state.at_look || state.rounds < settings_.min_rounds || state.comparisons.empty()) {
    return {.reason = StopReason::kKeepGoing,
            .text = fmt::format("{} rounds; the next look decides", state.rounds)};
  }
  const double threshold = settings_.min_effect_pct;
  const auto& [aa_name, a_a] = state.comparisons.front();
  if (a_a.p_beyond <= settings_.alpha) {
    return {.reason = StopReason::kAaCheckFailed,
            .text = fmt::format("the A/A comparison moved {:+.2f} % after {} rounds, beyond "
                                "±{:g} % (p {:.2g}): verdicts withheld",
                                a_a.change.change_pct, state.rounds, threshold, a_a.p_beyond)};
  }
  std::vector<std::string> settled;
  std::vector<std::string> open;
  for (std::size_t c = 1; c < state.comparisons.size(); ++c) {
    const auto& [name, comparison] = state.comparisons[c];
    if (comparison.p_beyond <= settings_.alpha / family_size_) {
      settled.push_back(fmt::format("{} beyond ±{:g} % (p {:.2g})", name, threshold,
                                    comparison.p_beyond));
    } else if (comparison.p_within <= settings_.alpha) {
      settled.push_back(fmt::format("{} within ±{:g} % (p {:.2g})", name, threshold,
                                    comparison.p_within));
    } else {
      open.push_back(fmt::format("{} {:+.2f} % [{:+.2f}, {:+.2f}]", name,
                                 comparison.change.change_pct,
                                 comparison.change.interval_pct.lower,
                                 comparison.change.interval_pct.upper));
    }
  }
  if (open.empty()) {
    return {.reason = StopReason::kSettled,
            .text = fmt::format("settled at the look after {} rounds: {}", state.rounds,
                                fmt::join(settled, ", "))};
  }
  return {.reason = StopReason::kKeepGoing,
          .text = fmt::format("open after {} rounds: {}", state.rounds, fmt::join(open, ", "))};
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

  PointState state{.rounds = rounds_run(point), .elapsed_s = elapsed_s, .at_look = false,
                   .comparisons = {}};
  const std::vector<int> looks = look_round_counts(settings);
  state.at_look = std::find(looks.begin(), looks.end(), state.rounds) != looks.end();
  if (!state.at_look) return state;
  state.comparisons.emplace_back(
      std::string(kAaComparisonName),
      compare_over_looks(point.baseline_repeat, point.baseline, samples.direction, state.rounds,
                         settings));
  for (std::size_t v = 0; v < point.variants.size(); ++v) {
    state.comparisons.emplace_back(
        samples.variant_names[v],
        compare_over_looks(point.variants[v], point.baseline, samples.direction, state.rounds,
                           settings));
  }
  return state;
}

}  // namespace mlalab::ab
