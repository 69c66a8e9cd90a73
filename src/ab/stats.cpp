#include "ab/stats.h"

#include <boost/math/distributions/normal.hpp>
#include <boost/math/distributions/students_t.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "core/median.h"

namespace mlalab::ab {
namespace {

constexpr double kPercent = 100.0;

double to_throughput(double sample, Direction direction) {
  if (!std::isfinite(sample) || sample <= 0) {
    throw std::invalid_argument(fmt::format("sample {} is not a positive finite number", sample));
  }
  return direction == Direction::kHigherIsBetter ? sample : 1.0 / sample;
}

double percent_of_log(double log_change) { return std::expm1(log_change) * kPercent; }

// P(T > t) for Student's t with df degrees of freedom.
double t_upper_tail(double t, int df) {
  if (std::isinf(t)) return t > 0 ? 0.0 : 1.0;
  return boost::math::cdf(boost::math::complement(boost::math::students_t(df), t));
}

// The Lan-DeMets O'Brien-Fleming-type spending function at information fraction t ∈ (0, 1].
double spent_alpha(double t, double alpha) {
  const double z = normal_upper_quantile(alpha / 2);
  return 2 * boost::math::cdf(boost::math::complement(boost::math::normal(), z / std::sqrt(t)));
}

}  // namespace

void validate(const Settings& settings) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("ab settings: " + what); };
  if (!(settings.min_effect_pct >= 0 && settings.min_effect_pct < kPercent)) {
    fail("min_effect_pct must lie in [0, 100)");
  }
  if (!(settings.alpha > 0 && settings.alpha < 1)) fail("alpha must lie in (0, 1)");
  if (settings.min_rounds < kMinRounds) fail(fmt::format("min_rounds must be ≥ {}", kMinRounds));
  if (settings.max_rounds < settings.min_rounds) fail("max_rounds must be ≥ min_rounds");
  if (!(settings.time_budget_s > 0)) fail("time_budget_s must be > 0");
}

std::vector<std::optional<double>> paired_log_ratios(const RoundSamples& treatment,
                                                     const RoundSamples& control,
                                                     Direction direction) {
  const std::size_t rounds = std::min(treatment.size(), control.size());
  std::vector<std::optional<double>> ratios(rounds);
  for (std::size_t round = 0; round < rounds; ++round) {
    if (!treatment[round] || !control[round]) continue;
    ratios[round] = std::log(to_throughput(*treatment[round], direction) /
                             to_throughput(*control[round], direction));
  }
  return ratios;
}

double median_of(const RoundSamples& samples) {
  std::vector<double> present;
  for (const auto& sample : samples) {
    if (sample) present.push_back(*sample);
  }
  if (present.empty()) return std::numeric_limits<double>::quiet_NaN();
  return median(std::move(present));
}

LogChange trimmed_log_change(std::span<const double> log_ratios, double trim) {
  LogChange change;
  const int n = static_cast<int>(log_ratios.size());
  change.rounds = n;
  if (n == 0) return change;
  std::vector<double> sorted(log_ratios.begin(), log_ratios.end());
  std::sort(sorted.begin(), sorted.end());
  const int g = static_cast<int>(std::floor(trim * n));
  const int kept = n - 2 * g;
  change.estimate = std::accumulate(sorted.begin() + g, sorted.end() - g, 0.0) / kept;
  if (kept < 2) return change;
  // The winsorized sample: each trimmed value replaced by the nearest kept one.
  double winsorized_sum = 0;
  double winsorized_squares = 0;
  for (int i = 0; i < n; ++i) {
    const double value = sorted[std::clamp(i, g, n - g - 1)];
    winsorized_sum += value;
    winsorized_squares += value * value;
  }
  const double mean = winsorized_sum / n;
  const double variance = std::max(0.0, (winsorized_squares - n * mean * mean) / (n - 1));
  change.standard_error = std::sqrt(variance) / ((1 - 2 * trim) * std::sqrt(n));
  change.degrees_of_freedom = kept - 1;
  return change;
}

Change change_of(const LogChange& log_change, double alpha) {
  Change change{.paired_rounds = log_change.rounds,
                .change_pct = log_change.rounds > 0 ? percent_of_log(log_change.estimate)
                                                    : std::numeric_limits<double>::quiet_NaN(),
                .interval_pct = {},
                .standard_error_log = log_change.standard_error,
                .degrees_of_freedom = log_change.degrees_of_freedom};
  if (!log_change.testable()) return change;
  const double half_width = student_t_upper_quantile(alpha / 2, log_change.degrees_of_freedom) *
                            log_change.standard_error;
  change.interval_pct = {.lower = percent_of_log(log_change.estimate - half_width),
                         .upper = percent_of_log(log_change.estimate + half_width)};
  return change;
}

LogThresholds log_thresholds(double threshold_pct) {
  const double fraction = threshold_pct / kPercent;
  return {.up = std::log1p(fraction),
          .down = fraction < 1 ? std::log1p(-fraction)
                               : -std::numeric_limits<double>::infinity()};
}

double p_beyond(const LogChange& change, double threshold_pct) {
  if (!change.testable()) return 1.0;
  const LogThresholds threshold = log_thresholds(threshold_pct);
  const int df = change.degrees_of_freedom;
  const double above = t_upper_tail((change.estimate - threshold.up) / change.standard_error, df);
  const double below =
      t_upper_tail((threshold.down - change.estimate) / change.standard_error, df);
  return std::min(1.0, 2 * std::min(above, below));
}

double p_within(const LogChange& change, double threshold_pct) {
  if (!change.testable()) return 1.0;
  const LogThresholds threshold = log_thresholds(threshold_pct);
  const int df = change.degrees_of_freedom;
  // H0 "change ≥ +T" is refuted by an estimate far below it, H0 "change ≤ −T" by one far above.
  const double not_above =
      t_upper_tail((threshold.up - change.estimate) / change.standard_error, df);
  const double not_below =
      t_upper_tail((change.estimate - threshold.down) / change.standard_error, df);
  return std::min(1.0, 2 * std::max(not_above, not_below));
}

std::vector<int> look_round_counts(const Settings& settings) {
  std::vector<int> rounds;
  for (long long n = settings.min_rounds; n < settings.max_rounds; n *= 2) {
    rounds.push_back(static_cast<int>(n));
  }
  rounds.push_back(settings.max_rounds);
  return rounds;
}

std::vector<Look> look_schedule(const Settings& settings) {
  std::vector<Look> looks;
  double spent_before = 0;
  for (const int n : look_round_counts(settings)) {
    const double spent =
        spent_alpha(static_cast<double>(n) / settings.max_rounds, settings.alpha);
    looks.push_back({.rounds = n, .alpha_share = (spent - spent_before) / settings.alpha});
    spent_before = spent;
  }
  return looks;
}

double look_share(const std::vector<Look>& schedule, int rounds) {
  for (const Look& look : schedule) {
    if (rounds <= look.rounds) return rounds < schedule.front().rounds ? 0.0 : look.alpha_share;
  }
  return schedule.empty() ? 0.0 : schedule.back().alpha_share;
}

double adjusted_over_looks(std::span<const double> p_values, std::span<const double> shares) {
  double adjusted = 1.0;
  for (std::size_t j = 0; j < p_values.size() && j < shares.size(); ++j) {
    if (shares[j] > 0) adjusted = std::min(adjusted, p_values[j] / shares[j]);
  }
  return adjusted;
}

double planning_level(const Settings& settings, int family_size) {
  const std::vector<Look> schedule = look_schedule(settings);
  return settings.alpha * schedule.back().alpha_share / std::max(1, family_size);
}

std::optional<double> rounds_to_resolve(double sd_log, double margin_log, double level) {
  if (!(margin_log > 0) || !(sd_log > 0)) return std::nullopt;
  const double z = normal_upper_quantile(level / 2) + normal_upper_quantile(1 - kPlanningPower);
  return std::pow(z * sd_log / margin_log, 2);
}

std::optional<int> rounds_for_power(double sd_log, double effect_pct, double threshold_pct,
                                    double level) {
  const double effect = std::log1p(std::abs(effect_pct) / kPercent);
  const auto rounds = rounds_to_resolve(sd_log, effect - log_thresholds(threshold_pct).up, level);
  if (!rounds) return std::nullopt;
  return static_cast<int>(std::ceil(*rounds));
}

double minimum_detectable_effect_pct(double sd_log, int rounds, double threshold_pct,
                                     double level) {
  if (rounds <= 0 || !(sd_log >= 0)) return std::numeric_limits<double>::infinity();
  const double z = normal_upper_quantile(level / 2) + normal_upper_quantile(1 - kPlanningPower);
  return percent_of_log(log_thresholds(threshold_pct).up + z * sd_log / std::sqrt(rounds));
}

std::vector<double> adjust_p_values(std::span<const double> p_values, Correction correction) {
  const std::size_t m = p_values.size();
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return p_values[a] < p_values[b]; });

  std::vector<double> adjusted(m);
  const auto tests = static_cast<double>(m);
  if (correction == Correction::kHolm) {
    // Step down from the smallest p: the k-th smallest is tested at α / (m − k + 1), and no
    // hypothesis is rejected after one that is not (the running maximum).
    double running_max = 0;
    for (std::size_t k = 0; k < m; ++k) {
      const double scaled = (tests - static_cast<double>(k)) * p_values[order[k]];
      running_max = std::max(running_max, std::min(1.0, scaled));
      adjusted[order[k]] = running_max;
    }
  } else {
    // Step up from the largest p: the k-th smallest is tested at α · k / m, and every
    // hypothesis below a rejected one is rejected too (the running minimum).
    double running_min = 1;
    for (std::size_t k = m; k-- > 0;) {
      const double scaled = tests / static_cast<double>(k + 1) * p_values[order[k]];
      running_min = std::min(running_min, std::min(1.0, scaled));
      adjusted[order[k]] = running_min;
    }
  }
  return adjusted;
}

std::string correction_method_note(const Settings& settings) {
  const std::string family = settings.family == CorrectionFamily::kEachVariant
                                 ? "the sweep points of each variant"
                                 : "every (variant, sweep point) pair of the sweep";
  const std::string test = fmt::format(
      "Each point's p-value tests \"|change| <= {:g} %\" (Student's t on the trimmed mean of "
      "paired log ratios) at each of its looks, adjusted for the looks: the smallest of "
      "p / (the look's share of alpha).",
      settings.min_effect_pct);
  if (settings.correction == Correction::kHolm) {
    return fmt::format(
        "Holm step-down correction over {}: the chance of even one false FASTER or SLOWER point "
        "verdict is at most {:g} %, whatever the dependence between points. Holm, because a "
        "variant's verdict stands on each of its point verdicts: one false point turns "
        "INCONCLUSIVE into ACCEPTED or REJECTED, so it is the family-wise rate that must be "
        "kept; Holm keeps it with more power than Bonferroni. {}",
        family, settings.alpha * kPercent, test);
  }
  return fmt::format(
      "Benjamini-Hochberg correction over {}: on average at most {:g} % of the FASTER and "
      "SLOWER point verdicts are false (the false discovery rate), assuming the points are "
      "independent or positively dependent. When no point truly changes this is also the "
      "chance of any false verdict; when some do, more power than Holm at the cost of a few "
      "false points among many true ones. {}",
      family, settings.alpha * kPercent, test);
}

double normal_upper_quantile(double upper_tail) {
  if (!(upper_tail > 0 && upper_tail < 1)) {
    throw std::invalid_argument("normal_upper_quantile: upper_tail must lie in (0, 1)");
  }
  return boost::math::quantile(boost::math::complement(boost::math::normal(), upper_tail));
}

double student_t_upper_quantile(double upper_tail, int degrees_of_freedom) {
  if (!(upper_tail > 0 && upper_tail < 1) || degrees_of_freedom < 1) {
    throw std::invalid_argument(
        "student_t_upper_quantile: upper_tail must lie in (0, 1), degrees of freedom ≥ 1");
  }
  return boost::math::quantile(
      boost::math::complement(boost::math::students_t(degrees_of_freedom), upper_tail));
}

}  // namespace mlalab::ab
