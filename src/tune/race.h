#pragma once
// The race at one tuning key: candidates (variant × split) measured in interleaved,
// shuffled rounds, and each dropped as soon as it is slower than the leader beyond doubt
// (successive halving), so that rounds are spent only where candidates are close. Pure logic
// over a sampling function: the tests race simulated candidates on the CPU.
//
// A round samples every candidate still racing once, in a seeded random order. From round
// min_rounds on, after every round: the leader is the candidate with the smallest estimated
// time (the 15 % trimmed mean of its log times, as the A/B lab estimates); each other candidate
// is compared with it over their paired rounds (the A/B lab's statistic: the trimmed mean of
// ln(its time / leader's time), Student-t interval at 1 − alpha), and dropped when the whole
// interval says it is slower. The race ends when one candidate is left (and has been timed
// winner_samples times), or at max_rounds, or when its time budget is spent; the winner is then
// the leader, except that an incumbent (the table's entry when re-tuning) still racing keeps
// its place. An incumbent is dropped only when it is slower than the leader by more than
// sticky_margin_pct beyond doubt: a challenger must beat it beyond the noise band, not merely by
// a point estimate (sticky tuning).
//
// alpha is per look, uncorrected for the many looks and pairs: a false drop loses a candidate
// that was within noise of the leader, i.e. one that could only have won by a hair. The
// simulation in tests/tune/race_test.cpp measures how often the truly fastest is lost.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "dispatch/tuning_table.h"

namespace mlalab::tune {

struct Entrant {
  std::string variant{};
  int splits = 1;
  int workers = 0;         // > 0: a balanced launch (dispatch::CandidateResult::workers)
  bool incumbent = false;  // the existing table's choice for this key
};

struct RaceSettings {
  // 3: with GPU timing noise of a few tenths of a percent, a candidate 5 % slower is separated
  // after 3 rounds; fewer leave too little to estimate the noise from.
  int min_rounds = 3;
  // 30: candidates still together after 30 rounds differ by less than the noise resolves.
  int max_rounds = 30;
  double alpha = 0.01;          // of each drop's interval
  // How much slower than the leader an incumbent must be, beyond doubt, to be dropped: the
  // noise band of a table entry. 1 %: the run-to-run spread of one config's timing across
  // processes (clocks, page placement) is a few tenths of a percent on the H200, so a
  // challenger within 1 % is not worth a table that changes with every re-tune.
  double sticky_margin_pct = 1.0;
  double time_budget_s = 30.0;  // per key: a safety net for slow candidates
  // The last candidate left goes on alone until it has this many samples (or max_rounds):
  // the table's time is then an estimate, not three rounds' worth. A winner timed 4 times
  // read 104 µs [99, 109] where 30 rounds of the same kernel read 112 (docs/perf-notes.md,
  // version 58). Rounds with one candidate cost one sample each.
  int winner_samples = 10;
  std::uint64_t seed = 1;       // of the order within each round
};

// Throws std::invalid_argument naming the first setting out of range.
void validate(const RaceSettings& settings);

// Takes one sample of entrant `index`: its time per call in µs (> 0, finite). May throw; the
// race does not catch.
using SampleFn = std::function<double(std::size_t index)>;

struct RaceOutcome {
  std::vector<dispatch::CandidateResult> ranking{};  // the winner first, then by estimated time
  std::size_t winner = 0;                          // index into the entrants
  int rounds = 0;
  long long samples = 0;  // taken; entrants × rounds without dropping
  std::string decision{};   // "new", "kept: ...", "replaced ...": see TableEntry::decision
  std::string stopped_because{};  // "one candidate left", "30 rounds", "time budget (30 s)"
};

// Races the entrants (at least one; at most one incumbent). `elapsed_s` reads the time since
// the race began (a parameter, so that tests control the budget).
RaceOutcome race(std::span<const Entrant> entrants, const SampleFn& sample,
                 const RaceSettings& settings, const std::function<double()>& elapsed_s);

}  // namespace mlalab::tune
