// The race of one tuning key, on simulated candidates: each has a true time per call, and a
// sample is that time with lognormal noise (the spread of GPU graph-replay medians is a few
// tenths of a percent; 3 % is a noisy machine) and a per-round factor shared by all candidates
// (a clock step hits every candidate of a round alike, which pairing cancels).
#include "tune/race.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "report/format.h"

namespace mlalab::tune {
namespace {

struct Simulation {
  std::vector<double> true_us{};
  double noise = 0.005;        // σ of ln(sample) within a round
  double round_drift = 0.02;   // σ of ln(the round's common factor)
  std::uint64_t seed = 1;
};

// Races the simulated candidates; candidate i is named "v<i>" with i splits + 1.
RaceOutcome simulate(const Simulation& simulation, RaceSettings settings,
                     int incumbent = -1) {
  std::vector<Entrant> entrants;
  for (std::size_t i = 0; i < simulation.true_us.size(); ++i) {
    entrants.push_back({.variant = fmt::format("v{}", i),
                        .splits = static_cast<int>(i) + 1,
                        .incumbent = static_cast<int>(i) == incumbent});
  }
  std::mt19937_64 rng(simulation.seed);
  std::normal_distribution<double> normal;
  std::size_t sampled_this_round = entrants.size();
  double round_factor = 1.0;
  long long calls = 0;
  const auto sample = [&](std::size_t index) {
    // A new round begins every time every racing candidate could have been sampled; the
    // factor only needs to change now and then to model drift, not exactly per round.
    if (++sampled_this_round >= entrants.size()) {
      sampled_this_round = 0;
      round_factor = std::exp(simulation.round_drift * normal(rng));
    }
    ++calls;
    return simulation.true_us[index] * round_factor * std::exp(simulation.noise * normal(rng));
  };
  settings.seed = simulation.seed;
  RaceOutcome outcome = race(entrants, sample, settings, [] { return 0.0; });
  EXPECT_EQ(calls, outcome.samples);
  return outcome;
}

std::size_t true_best(const std::vector<double>& true_us) {
  return static_cast<std::size_t>(std::min_element(true_us.begin(), true_us.end()) -
                                  true_us.begin());
}

TEST(Race, AClearlySlowerCandidateIsDroppedAtTheFirstLook) {
  const RaceOutcome outcome = simulate({.true_us = {10.0, 10.5}}, RaceSettings{});
  EXPECT_EQ(outcome.winner, 0u);
  // Dropped at round 3; the winner then goes on alone to its tenth sample.
  EXPECT_EQ(outcome.rounds, RaceSettings{}.winner_samples);
  EXPECT_EQ(outcome.samples, 2 * RaceSettings{}.min_rounds +
                                 (RaceSettings{}.winner_samples - RaceSettings{}.min_rounds));
  EXPECT_EQ(outcome.stopped_because, "one candidate left");
  EXPECT_EQ(outcome.decision, "new");
  ASSERT_EQ(outcome.ranking.size(), 2u);
  EXPECT_EQ(outcome.ranking[0].variant, "v0");
  EXPECT_EQ(outcome.ranking[0].outcome, "winner");
  EXPECT_FALSE(outcome.ranking[0].change_pct.has_value());
  EXPECT_NEAR(outcome.ranking[0].us, 10.0, 0.5);  // the drift moves every round's level
  EXPECT_EQ(outcome.ranking[0].samples, RaceSettings{}.winner_samples);
  EXPECT_EQ(outcome.ranking[1].samples, RaceSettings{}.min_rounds);
  EXPECT_LE(outcome.ranking[0].us_low, outcome.ranking[0].us);
  EXPECT_GE(outcome.ranking[0].us_high, outcome.ranking[0].us);
  // v1 is 4.8 % slower in throughput terms: its change against the winner says so.
  EXPECT_EQ(outcome.ranking[1].variant, "v1");
  ASSERT_TRUE(outcome.ranking[1].change_pct.has_value());
  EXPECT_NEAR(*outcome.ranking[1].change_pct, (10.0 / 10.5 - 1) * 100, 0.5);
  EXPECT_LT(outcome.ranking[1].change_high_pct, 0.0);
  EXPECT_TRUE(outcome.ranking[1].outcome.starts_with("runner-up; dropped after round 3"))
      << outcome.ranking[1].outcome;
  // The change as tune --explain's column writes it (real minus signs, % on the estimate).
  EXPECT_NE(outcome.ranking[1].outcome.find(fmt::format(
                ": {} [", report::signed_percent(*outcome.ranking[1].change_pct))),
            std::string::npos)
      << outcome.ranking[1].outcome;
}

TEST(Race, IdenticalCandidatesRaceToTheRoundLimit) {
  RaceSettings settings;
  settings.max_rounds = 12;
  const RaceOutcome outcome = simulate({.true_us = {10.0, 10.0, 10.0}}, settings);
  EXPECT_EQ(outcome.rounds, 12);
  EXPECT_EQ(outcome.samples, 36);
  EXPECT_EQ(outcome.stopped_because, "12 rounds");
  for (std::size_t i = 1; i < outcome.ranking.size(); ++i) {
    EXPECT_TRUE(outcome.ranking[i].change_pct.has_value());
    EXPECT_LT(outcome.ranking[i].change_low_pct, 0.0);
    EXPECT_GT(outcome.ranking[i].change_high_pct, 0.0) << "identical candidates must overlap";
  }
}

TEST(Race, TheTimeBudgetEndsARace) {
  std::vector<Entrant> entrants = {{.variant = "a", .splits = 1}, {.variant = "b", .splits = 1}};
  RaceSettings settings;
  settings.time_budget_s = 5;
  int calls = 0;
  const RaceOutcome outcome = race(
      // Equal samples: no interval can separate the two, so only the budget ends the race.
      entrants, [&](std::size_t) { ++calls; return 10.0; }, settings,
      [&] { return calls >= 8 ? 6.0 : 0.0; });
  EXPECT_EQ(outcome.rounds, 4);
  EXPECT_EQ(outcome.stopped_because, "time budget (5 s)");
}

// The claims of race.h over many simulated keys: a tuning grid's worth of candidates whose true
// times spread over 0-30 %, several of them within 1 % of the best, at GPU-like noise.
TEST(Race, OverManyKeysTheWinnerIsWithinNoiseOfTheBestAndMostSamplesAreSaved) {
  constexpr int kKeys = 300;
  int best_lost = 0;
  double worst_loss_pct = 0.0;
  long long samples = 0;
  long long without_halving = 0;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> spread(0.0, 0.3);
  for (int key = 0; key < kKeys; ++key) {
    Simulation simulation{.seed = static_cast<std::uint64_t>(key) + 1};
    for (int i = 0; i < 20; ++i) simulation.true_us.push_back(10.0 * (1 + spread(rng)));
    simulation.true_us[3] = 10.0;            // the best
    simulation.true_us[11] = 10.0 * 1.004;   // within noise of it
    simulation.true_us[17] = 10.0 * 1.01;    // 1 % behind
    const RaceOutcome outcome = simulate(simulation, RaceSettings{});
    samples += outcome.samples;
    without_halving += static_cast<long long>(simulation.true_us.size()) * outcome.rounds;
    const double loss_pct = (simulation.true_us[outcome.winner] / 10.0 - 1) * 100;
    worst_loss_pct = std::max(worst_loss_pct, loss_pct);
    if (outcome.winner != true_best(simulation.true_us)) ++best_lost;
  }
  // The winner is never more than the 1 %-behind candidate away from the best...
  EXPECT_LE(worst_loss_pct, 1.0 + 1e-9);
  // ... and mostly the best itself: only its 0.4 % twin, at 0.5 % noise, takes its place.
  EXPECT_LE(best_lost, kKeys / 2) << best_lost << " of " << kKeys;
  // Successive halving saves most of the samples racing everything to the end would take.
  EXPECT_LT(static_cast<double>(samples), 0.5 * static_cast<double>(without_halving))
      << samples << " of " << without_halving;
}

TEST(Race, AnIncumbentWithinTheNoiseBandIsKept) {
  int kept = 0;
  constexpr int kKeys = 100;
  for (int key = 0; key < kKeys; ++key) {
    // The challenger v0 is truly 0.2 % faster: within the 1 % band an incumbent keeps.
    const RaceOutcome outcome =
        simulate({.true_us = {10.0, 10.02}, .seed = static_cast<std::uint64_t>(key) + 1},
                 RaceSettings{}, /*incumbent=*/1);
    if (outcome.winner == 1) {
      ++kept;
      EXPECT_TRUE(outcome.decision.starts_with("kept v1/2")) << outcome.decision;
    }
  }
  EXPECT_EQ(kept, kKeys);
}

TEST(Race, AnIncumbentSlowerBeyondTheNoiseIsReplaced) {
  const RaceOutcome outcome = simulate({.true_us = {10.0, 10.5}}, RaceSettings{}, 1);
  EXPECT_EQ(outcome.winner, 0u);
  EXPECT_TRUE(outcome.decision.starts_with("replaced v1/2 (dropped after round 3"))
      << outcome.decision;
}

TEST(Race, RefusesBadSettingsAndBadSamples) {
  const std::vector<Entrant> one = {{.variant = "a", .splits = 1}};
  const auto zero_time = [] { return 0.0; };
  const auto sample = [](std::size_t) { return 1.0; };
  const auto refusal = [&](RaceSettings settings) {
    try {
      race(one, sample, settings, zero_time);
    } catch (const std::invalid_argument& error) {
      return std::string(error.what());
    }
    return std::string("accepted");
  };
  EXPECT_TRUE(refusal({.min_rounds = 2}).starts_with("min_rounds = 2"));
  EXPECT_TRUE(refusal({.min_rounds = 5, .max_rounds = 4}).starts_with("max_rounds = 4"));
  EXPECT_TRUE(refusal({.winner_samples = 0}).starts_with("winner_samples = 0"));
  EXPECT_TRUE(refusal({.alpha = 0}).starts_with("alpha = 0"));
  EXPECT_TRUE(refusal({.sticky_margin_pct = -1}).starts_with("sticky_margin_pct = -1"));
  EXPECT_TRUE(refusal({.time_budget_s = 0}).starts_with("time_budget_s = 0"));
  EXPECT_THROW(race({}, sample, RaceSettings{}, zero_time), std::invalid_argument);
  const std::vector<Entrant> two_incumbents = {{.variant = "a", .splits = 1, .incumbent = true},
                                               {.variant = "b", .splits = 1, .incumbent = true}};
  EXPECT_THROW(race(two_incumbents, sample, RaceSettings{}, zero_time), std::invalid_argument);
  EXPECT_THROW(race(one, [](std::size_t) { return std::nan(""); }, RaceSettings{}, zero_time),
               std::runtime_error);
}

}  // namespace
}  // namespace mlalab::tune
