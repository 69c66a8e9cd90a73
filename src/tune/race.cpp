#include "tune/race.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>
#include <random>
#include <stdexcept>

#include "ab/stats.h"
#include "report/format.h"

namespace mlalab::tune {
namespace {

// One entrant's samples, by round; nullopt in the rounds after it was dropped.
using Times = std::vector<std::optional<double>>;

struct Racer {
  const Entrant* entrant;
  Times times_us{};
  bool racing = true;
  std::string outcome{};  // set when dropped
};

// The trimmed mean of the log times and its interval, exponentiated: µs.
struct TimeEstimate {
  double us = 0.0;
  double low = 0.0;
  double high = 0.0;
  int samples = 0;
};

TimeEstimate estimate_time(const Times& times, double alpha) {
  std::vector<double> logs{};
  for (const auto& time : times) {
    if (time) logs.push_back(std::log(*time));
  }
  const ab::LogChange log_time = ab::trimmed_log_change(logs);
  TimeEstimate estimate{.us = std::exp(log_time.estimate),
                        .low = std::exp(log_time.estimate),
                        .high = std::exp(log_time.estimate),
                        .samples = static_cast<int>(logs.size())};
  if (log_time.testable()) {
    const double half = ab::student_t_upper_quantile(alpha / 2, log_time.degrees_of_freedom) *
                        log_time.standard_error;
    estimate.low = std::exp(log_time.estimate - half);
    estimate.high = std::exp(log_time.estimate + half);
  }
  return estimate;
}

// How much faster `candidate` is than `reference`, over their paired rounds, in throughput
// terms: + when the candidate is faster.
ab::Change speedup_over(const Times& candidate, const Times& reference, double alpha) {
  const auto ratios =
      ab::paired_log_ratios(candidate, reference, ab::Direction::kLowerIsBetter);
  std::vector<double> present{};
  for (const auto& ratio : ratios) {
    if (ratio) present.push_back(*ratio);
  }
  return ab::change_of(ab::trimmed_log_change(present), alpha);
}

std::string config_name(const Entrant& entrant) {
  return dispatch::config_text(entrant.variant, entrant.splits, entrant.workers);
}

// As the lab's reports and tune --explain write a change: "−4.7% [−8.4, −0.9]".
std::string change_text(const ab::Change& change) {
  return fmt::format("{} {}", report::signed_percent(change.change_pct),
                     report::interval_text(change.interval_pct));
}

std::size_t leader_of(const std::vector<Racer>& racers, double alpha) {
  std::optional<std::size_t> leader{};
  double best_us = 0.0;
  for (std::size_t i = 0; i < racers.size(); ++i) {
    if (!racers[i].racing) continue;
    const double us = estimate_time(racers[i].times_us, alpha).us;
    if (!leader || us < best_us) {
      leader = i;
      best_us = us;
    }
  }
  return *leader;
}

}  // namespace

void validate(const RaceSettings& settings) {
  if (settings.min_rounds < ab::kMinRounds) {
    throw std::invalid_argument(fmt::format("min_rounds = {}: allowed [{}, max_rounds]",
                                            settings.min_rounds, ab::kMinRounds));
  }
  if (settings.max_rounds < settings.min_rounds) {
    throw std::invalid_argument(fmt::format("max_rounds = {}: allowed [min_rounds = {}, ...]",
                                            settings.max_rounds, settings.min_rounds));
  }
  if (!(settings.alpha > 0 && settings.alpha < 1)) {
    throw std::invalid_argument(fmt::format("alpha = {}: allowed (0, 1)", settings.alpha));
  }
  if (!(settings.sticky_margin_pct >= 0 && settings.sticky_margin_pct < 100)) {
    throw std::invalid_argument(fmt::format("sticky_margin_pct = {}: allowed [0, 100)",
                                            settings.sticky_margin_pct));
  }
  if (settings.winner_samples < 1) {
    throw std::invalid_argument(
        fmt::format("winner_samples = {}: allowed ≥ 1", settings.winner_samples));
  }
  if (!(settings.time_budget_s > 0)) {
    throw std::invalid_argument(
        fmt::format("time_budget_s = {}: allowed > 0", settings.time_budget_s));
  }
}

RaceOutcome race(std::span<const Entrant> entrants, const SampleFn& sample,
                 const RaceSettings& settings, const std::function<double()>& elapsed_s) {
  validate(settings);
  if (entrants.empty()) throw std::invalid_argument("a race needs at least one entrant");
  const auto incumbents = std::count_if(entrants.begin(), entrants.end(),
                                        [](const Entrant& entrant) { return entrant.incumbent; });
  if (incumbents > 1) throw std::invalid_argument("a race has at most one incumbent");

  std::vector<Racer> racers{};
  for (const Entrant& entrant : entrants) racers.push_back({.entrant = &entrant, .times_us = {}});
  std::mt19937_64 order_rng(settings.seed);
  std::vector<std::size_t> order(racers.size());
  std::iota(order.begin(), order.end(), std::size_t{0});

  RaceOutcome outcome;
  const auto racing_count = [&] {
    return std::count_if(racers.begin(), racers.end(), [](const Racer& r) { return r.racing; });
  };
  while (true) {
    std::shuffle(order.begin(), order.end(), order_rng);
    for (Racer& racer : racers) racer.times_us.emplace_back();
    for (const std::size_t index : order) {
      if (!racers[index].racing) continue;
      const double us = sample(index);
      if (!(us > 0) || !std::isfinite(us)) {
        throw std::runtime_error(fmt::format("{}: a sample of {} µs is not a time",
                                             config_name(entrants[index]), us));
      }
      racers[index].times_us.back() = us;
      ++outcome.samples;
    }
    ++outcome.rounds;

    if (outcome.rounds >= settings.min_rounds) {
      const std::size_t leader = leader_of(racers, settings.alpha);
      for (Racer& racer : racers) {
        if (!racer.racing || &racer == &racers[leader]) continue;
        const ab::Change change =
            speedup_over(racer.times_us, racers[leader].times_us, settings.alpha);
        const double margin_pct = racer.entrant->incumbent ? settings.sticky_margin_pct : 0.0;
        if (change.interval_pct.upper < -margin_pct) {
          racer.racing = false;
          racer.outcome = fmt::format("dropped after round {}: {} against {}", outcome.rounds,
                                      change_text(change), config_name(*racers[leader].entrant));
        }
      }
    }
    // The one left has raced every round: its samples are the rounds.
    if (racing_count() == 1 && outcome.rounds >= settings.winner_samples) {
      outcome.stopped_because = "one candidate left";
      break;
    }
    if (outcome.rounds >= settings.max_rounds) {
      outcome.stopped_because = fmt::format("{} rounds", settings.max_rounds);
      break;
    }
    if (elapsed_s() >= settings.time_budget_s) {
      outcome.stopped_because = fmt::format("time budget ({:g} s)", settings.time_budget_s);
      break;
    }
  }

  // The winner: the incumbent while it still races (sticky), else the leader.
  const std::size_t leader = leader_of(racers, settings.alpha);
  const auto incumbent = std::find_if(racers.begin(), racers.end(),
                                      [](const Racer& r) { return r.entrant->incumbent; });
  outcome.winner = leader;
  if (incumbent == racers.end()) {
    outcome.decision = "new";
  } else if (incumbent->racing) {
    outcome.winner = static_cast<std::size_t>(incumbent - racers.begin());
    outcome.decision = fmt::format("kept {}: no challenger beat it beyond the noise",
                                   config_name(*incumbent->entrant));
  } else {
    outcome.decision = fmt::format("replaced {} ({})", config_name(*incumbent->entrant),
                                   incumbent->outcome);
  }

  const Racer& winner = racers[outcome.winner];
  for (const Racer& racer : racers) {
    const TimeEstimate time = estimate_time(racer.times_us, settings.alpha);
    dispatch::CandidateResult result{.variant = racer.entrant->variant,
                                     .splits = racer.entrant->splits,
                                     .workers = racer.entrant->workers,
                                     .us = time.us,
                                     .us_low = time.low,
                                     .us_high = time.high,
                                     .samples = time.samples,
                                     .outcome = racer.outcome};
    if (&racer == &winner) {
      result.outcome = "winner";
    } else {
      const ab::Change change = speedup_over(racer.times_us, winner.times_us, settings.alpha);
      result.change_pct = change.change_pct;
      result.change_low_pct = change.interval_pct.lower;
      result.change_high_pct = change.interval_pct.upper;
      if (racer.racing) result.outcome = "still racing at the end: within the noise of the winner";
    }
    outcome.ranking.push_back(std::move(result));
  }
  // The winner first, then by estimated time.
  std::stable_sort(outcome.ranking.begin(), outcome.ranking.end(),
                   [](const dispatch::CandidateResult& a, const dispatch::CandidateResult& b) {
                     const bool a_wins = !a.change_pct.has_value();
                     const bool b_wins = !b.change_pct.has_value();
                     if (a_wins != b_wins) return a_wins;
                     return a.us < b.us;
                   });
  if (outcome.ranking.size() > 1) {
    outcome.ranking[1].outcome = "runner-up; " + outcome.ranking[1].outcome;
  }
  return outcome;
}

}  // namespace mlalab::tune
