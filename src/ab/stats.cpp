#include "ab/stats.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>

#include "bench/median.h"  // header-only and CUDA-free, like this module

namespace mlalab::ab {
namespace {

constexpr double kPercent = 100.0;

double to_throughput(double sample, Direction direction) {
  if (!std::isfinite(sample) || sample <= 0) {
    throw std::invalid_argument(fmt::format("sample {} is not a positive finite number", sample));
  }
  return direction == Direction::kHigherIsBetter ? sample : 1.0 / sample;
}

double change_pct(double treatment_median, double control_median) {
  return (treatment_median / control_median - 1.0) * kPercent;
}

// Uniform round indices for the resamples. Each 64-bit draw of the generator gives two 32-bit
// words, and each word becomes an index in [0, n) by Lemire's multiply-and-shift with
// rejection: exactly uniform, no division on the common path, and unlike
// std::uniform_int_distribution the same mapping on every standard library.
class IndexDrawer {
 public:
  explicit IndexDrawer(std::seed_seq& seed) : generator_(seed) {}

  std::uint32_t operator()(std::uint32_t n) {
    std::uint64_t product = std::uint64_t{next_word()} * n;
    auto low = static_cast<std::uint32_t>(product);
    if (low < n) {
      // The words whose low product part falls below 2^32 mod n would make small indices
      // likelier; draw again for them.
      const std::uint32_t rejected_below = static_cast<std::uint32_t>(-n) % n;
      while (low < rejected_below) {
        product = std::uint64_t{next_word()} * n;
        low = static_cast<std::uint32_t>(product);
      }
    }
    return static_cast<std::uint32_t>(product >> 32);
  }

 private:
  std::uint32_t next_word() {
    if (!spare_) {
      const std::uint64_t draw = generator_();
      spare_ = static_cast<std::uint32_t>(draw >> 32);
      return static_cast<std::uint32_t>(draw);
    }
    const std::uint32_t word = *spare_;
    spare_.reset();
    return word;
  }

  std::mt19937_64 generator_;
  std::optional<std::uint32_t> spare_;
};

// One arm's throughputs ordered once, so that the median of each resample is found by walking
// this order with the resample's multiplicities: O(n) per resample, with no copy and no sort.
class ResampledMedian {
 public:
  explicit ResampledMedian(const std::vector<double>& values)
      : values_(values), order_(values.size()) {
    std::iota(order_.begin(), order_.end(), 0);
    std::stable_sort(order_.begin(), order_.end(),
                     [&](std::size_t a, std::size_t b) { return values_[a] < values_[b]; });
  }

  // The median of the resample that holds round i counts[i] times (counts sum to n).
  double operator()(const std::vector<int>& counts) const {
    const int n = static_cast<int>(values_.size());
    // The median is the mean of the order statistics of these ranks (0-based; equal for odd n).
    const int lower_rank = (n - 1) / 2;
    const int upper_rank = n / 2;
    int seen = 0;
    std::optional<double> lower;
    for (const std::size_t round : order_) {
      seen += counts[round];
      if (!lower && seen > lower_rank) lower = values_[round];
      if (seen > upper_rank) return (*lower + values_[round]) / 2;
    }
    throw std::logic_error("resample counts do not sum to the number of rounds");
  }

 private:
  const std::vector<double>& values_;
  std::vector<std::size_t> order_;
};

}  // namespace

void validate(const Settings& settings) {
  auto fail = [](const std::string& what) { throw std::invalid_argument("ab settings: " + what); };
  if (!(settings.min_effect_pct >= 0)) fail("min_effect_pct must be ≥ 0");
  if (!(settings.alpha > 0 && settings.alpha < 1)) fail("alpha must lie in (0, 1)");
  if (settings.resamples < 1) fail("resamples must be ≥ 1");
  if (settings.min_rounds < kMinResampledRounds) {
    fail(fmt::format("min_rounds must be ≥ {}", kMinResampledRounds));
  }
  if (settings.max_rounds < settings.min_rounds) fail("max_rounds must be ≥ min_rounds");
  if (!(settings.time_budget_s > 0)) fail("time_budget_s must be > 0");
}

int min_resamples_for(int tests, double alpha) {
  // 2 / (B + 1) ≤ α / m  ⇔  B ≥ 2m / α − 1.
  return static_cast<int>(std::ceil(2.0 * tests / alpha - 1.0));
}

PairedRounds pair_rounds(const RoundSamples& treatment, const RoundSamples& control,
                         Direction direction) {
  PairedRounds paired;
  const std::size_t rounds = std::min(treatment.size(), control.size());
  for (std::size_t round = 0; round < rounds; ++round) {
    if (!treatment[round] || !control[round]) continue;
    paired.treatment.push_back(to_throughput(*treatment[round], direction));
    paired.control.push_back(to_throughput(*control[round], direction));
  }
  return paired;
}

double median_of(const RoundSamples& samples) {
  std::vector<double> present;
  for (const auto& sample : samples) {
    if (sample) present.push_back(*sample);
  }
  if (present.empty()) return std::numeric_limits<double>::quiet_NaN();
  return bench::median(std::move(present));
}

BootstrapDistribution::BootstrapDistribution(std::vector<double> replicates_pct)
    : sorted_pct_(std::move(replicates_pct)) {
  std::sort(sorted_pct_.begin(), sorted_pct_.end());
}

double BootstrapDistribution::quantile(double probability) const {
  if (sorted_pct_.empty()) {
    return probability < 0.5 ? -std::numeric_limits<double>::infinity()
                             : std::numeric_limits<double>::infinity();
  }
  const double position = probability * static_cast<double>(sorted_pct_.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(position));
  const std::size_t above = std::min(below + 1, sorted_pct_.size() - 1);
  const double fraction = position - static_cast<double>(below);
  return sorted_pct_[below] + fraction * (sorted_pct_[above] - sorted_pct_[below]);
}

double BootstrapDistribution::p_exceeds(double threshold_pct) const {
  const auto at_most =
      std::upper_bound(sorted_pct_.begin(), sorted_pct_.end(), threshold_pct) - sorted_pct_.begin();
  return static_cast<double>(at_most + 1) / static_cast<double>(sorted_pct_.size() + 1);
}

double BootstrapDistribution::p_falls_below(double threshold_pct) const {
  const auto at_least =
      sorted_pct_.end() - std::lower_bound(sorted_pct_.begin(), sorted_pct_.end(), threshold_pct);
  return static_cast<double>(at_least + 1) / static_cast<double>(sorted_pct_.size() + 1);
}

double BootstrapDistribution::p_beyond(double threshold_pct) const {
  const double one_sided = std::min(p_exceeds(threshold_pct), p_falls_below(-threshold_pct));
  return std::min(1.0, 2 * one_sided);
}

ChangeEstimate estimate_change(const PairedRounds& rounds, const Settings& settings,
                               std::span<const std::uint32_t> stream) {
  ChangeEstimate estimate;
  const int n = rounds.size();
  estimate.change.paired_rounds = n;
  if (n == 0) return estimate;
  estimate.change.change_pct =
      change_pct(bench::median(rounds.treatment), bench::median(rounds.control));
  if (n < kMinResampledRounds) return estimate;

  std::vector<std::uint32_t> seed_words = {static_cast<std::uint32_t>(settings.seed),
                                           static_cast<std::uint32_t>(settings.seed >> 32)};
  seed_words.insert(seed_words.end(), stream.begin(), stream.end());
  std::seed_seq seed(seed_words.begin(), seed_words.end());
  IndexDrawer draw_round(seed);

  const ResampledMedian treatment_median(rounds.treatment);
  const ResampledMedian control_median(rounds.control);
  std::vector<int> counts(static_cast<std::size_t>(n));
  std::vector<double> replicates(static_cast<std::size_t>(settings.resamples));
  for (double& replicate : replicates) {
    // One resample: n round indices with replacement. Both arms see the same rounds, which
    // keeps each round's arms together (the paired, or block, bootstrap).
    std::fill(counts.begin(), counts.end(), 0);
    for (int draw = 0; draw < n; ++draw) ++counts[draw_round(static_cast<std::uint32_t>(n))];
    replicate = change_pct(treatment_median(counts), control_median(counts));
  }
  estimate.distribution = BootstrapDistribution(std::move(replicates));
  estimate.change.interval_pct = {.lower = estimate.distribution.quantile(settings.alpha / 2),
                                  .upper = estimate.distribution.quantile(1 - settings.alpha / 2)};
  return estimate;
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
      "Each point's p-value is a paired bootstrap test (B = {}) of \"|change| <= max(A/A band, "
      "{:g} %)\", the same threshold the verdict uses.",
      settings.resamples, settings.min_effect_pct);
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
  // Bisection on P(Z > z) = erfc(z / √2) / 2, which falls monotonically in z: slower than a
  // rational approximation but with no table of coefficients, and it runs once per verdict.
  constexpr double kBound = 40;   // P(Z > 40) underflows a double: the root lies inside
  constexpr int kHalvings = 200;  // far more than the 52 bits of a double need
  double low = -kBound;
  double high = kBound;
  for (int step = 0; step < kHalvings && high - low > 0; ++step) {
    const double middle = (low + high) / 2;
    if (std::erfc(middle / std::sqrt(2.0)) / 2 > upper_tail) {
      low = middle;
    } else {
      high = middle;
    }
  }
  return (low + high) / 2;
}

}  // namespace mlalab::ab
