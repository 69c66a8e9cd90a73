#include "report/markdown_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <map>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <utility>
#include <variant>
#include <vector>

#include "ab/environment.h"
#include "ab/stats.h"
#include "ab/verdict.h"
#include "core/kernel_config.h"
#include "core/median.h"
#include "core/number_text.h"
#include "core/text_table.h"
#include "report/change_svg.h"
#include "report/format.h"
#include "report/record_view.h"
#include "report/throughput_svg.h"

namespace mlalab::report {
namespace {

constexpr std::size_t kShortHashLength = 12;  // enough to tell builds apart at a glance
constexpr int kPValueDigits = 3;

// ---------------------------------------------------------------------------------------------
// Markdown pieces

using Column = TextColumn;

// A cell's text made safe for a table row: no pipe ends the cell, no newline ends the row.
std::string cell(std::string text) {
  std::string safe;
  for (const char c : text) {
    if (c == '|') {
      safe += "\\|";
    } else if (c == '\n' || c == '\r') {
      safe += ' ';
    } else {
      safe += c;
    }
  }
  return safe;
}

// A table of cells made safe for Markdown, then a blank line.
void print_table(std::ostream& out, const std::vector<Column>& columns,
                 std::vector<std::vector<std::string>> rows) {
  for (auto& row : rows) {
    for (auto& text : row) text = cell(std::move(text));
  }
  print_markdown_table(out, columns, rows);
  out << "\n";
}

// A fenced block that no backtick run inside the text can close early.
void print_fenced(std::ostream& out, const std::string& text, const std::string& language) {
  std::size_t longest = 0;
  std::size_t run = 0;
  for (const char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(std::max<std::size_t>(3, longest + 1), '`');
  out << fence << language << "\n" << text;
  if (!text.empty() && text.back() != '\n') out << "\n";
  out << fence << "\n\n";
}

std::string or_unknown(const std::string& text) { return text.empty() ? "unknown" : text; }

std::string mhz_text(int mhz) {
  return mhz > 0 ? fmt::format("{} MHz", group_thousands(mhz)) : "unknown";
}

// A draw within this share of the power limit counts as at it: the board's controller lowers
// the SM clock to hold the limit, so the kernels' speed there depends on energy, not waiting.
constexpr double kAtPowerLimitShare = 0.97;

// One point's median power draw over its rounds' readings: "612 W", "693 W (at the limit)",
// or "–" where none was read.
std::string point_power_text(const ab::RunRecord& record, int point) {
  std::vector<double> watts;
  for (const ab::Sample& sample : record.samples) {
    if (sample.point == point && sample.power_w > 0) watts.push_back(sample.power_w);
  }
  if (watts.empty()) return "–";
  const double median_w = median(std::move(watts));
  const double limit_w = record.environment.power_limit_w;
  const bool at_limit = limit_w > 0 && median_w >= kAtPowerLimitShare * limit_w;
  return fmt::format("{:.0f} W{}", median_w, at_limit ? " (at the limit)" : "");
}

std::string short_hash(const std::string& hash) {
  if (hash.empty()) return "–";
  return fmt::format("`{}`", hash.substr(0, kShortHashLength));
}

// The code hash, and a Python arm's compiled binaries where the run knows them.
std::string hashes_text(const ab::ArmRecord& arm) {
  if (arm.binary_hash.empty()) return short_hash(arm.code_hash);
  return fmt::format("{}, binaries {}", short_hash(arm.code_hash), short_hash(arm.binary_hash));
}

std::string p_text(double p) {
  return std::isfinite(p) ? fmt::format("{:.{}g}", p, kPValueDigits) : "n/a";
}

std::string role_text(ab::ArmRole role) {
  switch (role) {
    case ab::ArmRole::kBaseline:
      return "baseline (A)";
    case ab::ArmRole::kBaselineRepeat:
      return "A/A control (A′): the baseline again";
    case ab::ArmRole::kVariant:
      return "variant";
  }
  return "unknown";
}

std::string prediction_text(const ab::Arm& arm) {
  return arm.prediction_pct ? short_percent(*arm.prediction_pct) : "none";
}

std::string metric_text(const ab::RunRecord& record) {
  if (record.experiment.baseline.is_kernel()) {
    return "throughput in sequences per second (batch size / time of one decode step), higher "
           "is better";
  }
  if (metric_direction(record) == ab::Direction::kHigherIsBetter) {
    return "the number each command prints (the first group of its `metric` regex, on stdout), "
           "higher is better";
  }
  // A latency is compared as its inverse, a throughput, so that + always means better; say so,
  // or a median of 8 against 10 reported as +25 % reads like a mistake.
  return "the number each command prints (the first group of its `metric` regex, on stdout), "
         "lower is better. Changes are in throughput terms, so that + means better: a change is "
         "median(baseline) / median(variant) − 1, so a variant at 8 against a baseline at 10 is "
         "+25 %, and one at 12 is −16.7 %";
}

// What one instance of an arm costs is a fixed offset of the arm (ab/arms.h).
std::string instances_text(const ab::MeasureSettings& measure) {
  if (measure.instances_per_arm <= 1) return " Each arm is one CUDA graph and workspace.";
  return fmt::format(
      " Each arm is {} instances (a CUDA graph and workspace each) replayed in turn, so that "
      "what one instance costs averages out instead of shifting the arm.",
      measure.instances_per_arm);
}

std::string throttle_text(double fraction) {
  if (fraction <= 0) return "Throttling was not checked (throttle_fraction 0).";
  return fmt::format("A sample taken while the SM clock read below {:g}% of the run's peak "
                     "reading is flagged throttled and excluded.",
                     fraction * 100);
}

// measure.heat_ms as the Samples line's last sentence; empty without heat.
std::string heat_text(const ab::MeasureSettings& measure) {
  if (measure.heat_ms <= 0) return {};
  return fmt::format(
      " Heat: before each sample the arm's own samples ran for {:g} ms and were discarded, so "
      "that each arm was measured at the clock its sustained load holds (lower at a power cap) "
      "rather than in a burst.",
      measure.heat_ms);
}

std::string context_spec_text(const ab::ContextSpec& context) {
  switch (context.kind) {
    case ab::ContextSpec::Kind::kFixed:
      return fmt::format("{} tokens for every request", group_thousands(context.length));
    case ab::ContextSpec::Kind::kUniform:
      return fmt::format("uniform in [{}, {}] tokens (seed {})", group_thousands(context.min_length),
                         group_thousands(context.max_length), context.seed);
    case ab::ContextSpec::Kind::kLogNormal:
      return fmt::format("log-normal, median {} tokens, σ {:g}, clamped to [{}, {}] (seed {})",
                         group_thousands(context.length), context.sigma,
                         group_thousands(context.min_length), group_thousands(context.max_length),
                         context.seed);
  }
  return "unknown";
}

// One point's request lengths: "4,096", or "512–8,192, median 2,048 (64 requests)".
std::string context_lengths_text(std::vector<int> lengths) {
  if (lengths.empty()) return "–";
  std::sort(lengths.begin(), lengths.end());
  if (lengths.front() == lengths.back()) return group_thousands(lengths.front());
  return fmt::format("{}–{}, median {} ({} requests)", group_thousands(lengths.front()),
                     group_thousands(lengths.back()), group_thousands(lengths[lengths.size() / 2]),
                     lengths.size());
}

std::string stop_text(const ab::PointRecord& point) {
  if (point.stop_reason == ab::StopReason::kKeepGoing) {
    return point.stop_text.empty() ? "did not stop: the run ended first"
                                   : "did not stop: the run ended first (" + point.stop_text + ")";
  }
  // The stopping rule's own text says why ("settled at the look after 20 rounds: 8 warps
  // beyond ±2 % (p 3e-09)"); the bare reason only when there is none.
  return point.stop_text.empty() ? std::string(ab::to_string(point.stop_reason)) : point.stop_text;
}

// A size of a change or a share, unsigned, with the digits that matter: "0.4%", "12%".
std::string magnitude_text(double pct) {
  if (!std::isfinite(pct)) return "n/a";
  constexpr double kWholeFrom = 9.95;  // where one decimal would show "10.0"
  return fmt::format("{:.{}f}%", std::abs(pct), std::abs(pct) >= kWholeFrom ? 0 : 1);
}

// The threshold T as the settings give it: "2%".
std::string threshold_text(double threshold_pct) { return fmt::format("{:g}%", threshold_pct); }

// The looks of the analysis, or those the settings give when there is none (nothing was
// analysed); none when the settings are out of range (a damaged file).
std::vector<ab::Look> looks_of(const ab::RunRecord& record) {
  if (record.analysis && !record.analysis->looks.empty()) return record.analysis->looks;
  try {
    ab::validate(record.experiment.stats);
  } catch (const std::invalid_argument&) {
    return {};
  }
  return ab::look_schedule(record.experiment.stats);
}

// The looks as a sentence: "Looks after 10, 20, 40, 80 and 150 rounds, spending 0.0%, 0.0%,
// 0.3%, 14% and 85% of α (...)".
std::string looks_sentence(const std::vector<ab::Look>& looks) {
  if (looks.empty()) return "No looks: the settings are out of range.";
  if (looks.size() == 1) {
    return fmt::format("One look, after {} rounds, spending all of α.",
                       group_thousands(looks.front().rounds));
  }
  std::vector<std::string> rounds;
  std::vector<std::string> shares;
  for (const ab::Look& look : looks) {
    rounds.push_back(group_thousands(look.rounds));
    shares.push_back(magnitude_text(100 * look.alpha_share));
  }
  const auto listed = [](const std::vector<std::string>& items) {
    std::string text;
    for (std::size_t i = 0; i < items.size(); ++i) {
      text += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
    }
    return text;
  };
  return fmt::format(
      "Looks after {} rounds, spending {} of α (an O'Brien-Fleming-type spending: almost "
      "nothing early); a p-value is the smallest over the point's looks of p / (the look's "
      "share), so that stopping at any look keeps the error rate.",
      listed(rounds), listed(shares));
}

// ", more than max_rounds = 60 allows; raise ..." when the advice cannot be followed with the
// run's settings: the user must raise them (the time budget too), not just run again.
std::string beyond_settings_text(int rounds_in_all, const ab::Settings& settings) {
  if (rounds_in_all <= settings.max_rounds) return "";
  return fmt::format(", more than max_rounds = {} allows; raise decision.max_rounds (and "
                     "time_budget_s)",
                     settings.max_rounds);
}

// What an AMBIGUOUS point's interval says about the change, against the threshold ±T: never
// "no change" for an interval that excludes 0.
std::string ambiguous_seen_text(const ab::Change& change, double threshold_pct) {
  const ab::Interval& interval = change.interval_pct;
  if (interval.contains(0)) {
    return fmt::format("could be anything from {} to {}", short_percent(interval.lower),
                       short_percent(interval.upper));
  }
  const bool faster = interval.lower > 0;
  const std::string direction = faster ? "faster" : "slower";
  const double nearest = faster ? interval.lower : -interval.upper;
  const double furthest = faster ? interval.upper : -interval.lower;
  const std::string threshold = threshold_text(threshold_pct);
  if (nearest >= threshold_pct) {
    // The interval clears ±T, but the test adjusted for the looks and corrected across the
    // points does not: the plain interval is not the whole evidence.
    return fmt::format("at least {} {}, but not beyond ±{} once corrected for the looks and "
                       "the points",
                       magnitude_text(nearest), direction, threshold);
  }
  if (furthest > threshold_pct) {
    return fmt::format("at least {} {}, maybe more than {}", magnitude_text(nearest), direction,
                       threshold);
  }
  // Inside ±T, but the equivalence test at the looks' share of α is stricter than the interval.
  return fmt::format("{} to {} {}, but not yet shown within ±{} once corrected for the looks",
                     magnitude_text(nearest), magnitude_text(furthest), direction, threshold);
}

// The rounds in all that would settle an AMBIGUOUS point, from the same planning model as the
// decision (verdict.h: rounds_to_settle).
std::string settle_text(const ab::PointResult& point, const ab::Settings& settings) {
  const std::optional<int>& rounds = point.judgement.rounds_to_settle;
  if (!rounds) return ": no practical number of rounds would settle it";
  const int run = point.evidence.change.paired_rounds;
  if (*rounds <= run) {
    return fmt::format(": {} rounds should have settled it by the planning model, and {} did "
                       "not: a borderline estimate, more rounds would tell",
                       group_thousands(*rounds), group_thousands(run));
  }
  return fmt::format(": ≈ {} rounds in all would settle it{}", group_thousands(*rounds),
                     beyond_settings_text(*rounds, settings));
}

// The verdict cell of a per-variant table: the verdict and what was seen, so that no real
// change reads as "no change".
std::string verdict_cell(const ab::PointResult& point, const ab::PointNoise* noise,
                         const ab::Settings& settings) {
  const ab::PointVerdict verdict = point.judgement.verdict;
  const std::string name(ab::to_string(verdict));
  const ab::Change& change = point.evidence.change;
  const std::string threshold = threshold_text(point.evidence.threshold_pct);
  switch (verdict) {
    case ab::PointVerdict::kFaster:
    case ab::PointVerdict::kSlower:
      return name;
    case ab::PointVerdict::kWithinNoise:
      return fmt::format("{}: no change seen, and none beyond ±{}", name, threshold);
    case ab::PointVerdict::kSmallChange:
      return fmt::format("{}: a small change, {} {}, below the {} that matters", name,
                         signed_percent(change.change_pct), interval_text(change.interval_pct),
                         threshold);
    case ab::PointVerdict::kWithheld:
      if (!noise) return name + ": the A/A check failed at this point";
      return fmt::format("{}: the A/A check failed at this point (A′ − A {} {})", name,
                         signed_percent(noise->a_a.change_pct),
                         interval_text(noise->a_a.interval_pct));
    case ab::PointVerdict::kAmbiguous:
      if (change.paired_rounds < settings.min_rounds) {
        return fmt::format("{}: {} of the {} paired rounds a verdict needs", name,
                           change.paired_rounds, settings.min_rounds);
      }
      return fmt::format("{}: {}{}", name,
                         ambiguous_seen_text(change, point.evidence.threshold_pct),
                         settle_text(point, settings));
  }
  return name;
}

// The A/A check's result at a point: "ok (p 0.93)", "FLAGGED (p 0.001): verdicts withheld".
std::string a_a_check_text(const ab::PointNoise& noise, const ab::Settings& settings) {
  if (noise.flagged) return fmt::format("FLAGGED (p {}): verdicts withheld", p_text(noise.p_check));
  if (noise.a_a.paired_rounds < settings.min_rounds) {
    return fmt::format("not checked: {} of the {} paired rounds it needs",
                       noise.a_a.paired_rounds, settings.min_rounds);
  }
  return fmt::format("ok (p {})", p_text(noise.p_check));
}

// ---------------------------------------------------------------------------------------------
// The conclusion, generated from the verdicts

struct Finding {
  int concurrency = 0;
  double change_pct = 0;
};

// "(−14% at C1)", "(−14% at C1, −9% at C2)", "(−14% at C1 … −3% at C128)"
std::string range_text(const std::vector<Finding>& findings) {
  const auto one = [](const Finding& finding) {
    return fmt::format("{} at {}", short_percent(finding.change_pct),
                       point_label(finding.concurrency));
  };
  if (findings.empty()) return "";
  if (findings.size() == 1) return "(" + one(findings.front()) + ")";
  const std::string separator = findings.size() == 2 ? ", " : " … ";
  return "(" + one(findings.front()) + separator + one(findings.back()) + ")";
}

std::vector<int> concurrencies_of(const std::vector<Finding>& findings) {
  std::vector<int> concurrencies;
  for (const Finding& finding : findings) concurrencies.push_back(finding.concurrency);
  return concurrencies;
}

// Where the findings are: "at every concurrency" only when they cover the whole sweep; a run
// that measured fewer points names the ones it measured and says how many it did not.
std::string where_text(const std::vector<Finding>& findings, std::size_t sweep_points) {
  if (findings.size() == sweep_points) return "at every concurrency";
  return "at " + point_list(concurrencies_of(findings));
}

std::string unmeasured_text(std::size_t analysed_points, std::size_t sweep_points) {
  if (analysed_points >= sweep_points) return "";
  return fmt::format(" ({} of {} sweep points not measured)", sweep_points - analysed_points,
                     sweep_points);
}

// MDEs this far apart are named point by point; closer, the largest speaks for all.
constexpr double kMdeSpreadForOneFigure = 1.5;

// What an INCONCLUSIVE variant could not have seen: "; this run could not have seen changes
// smaller than 2.9% (...)", from the minimum detectable effects of its points with a verdict
// (a WITHHELD point's rounds are not evidence). Empty when none has one.
std::string undetectable_text(const ab::VariantResult& result) {
  std::vector<std::pair<int, double>> mdes;  // (concurrency, MDE %)
  for (const ab::PointResult& point : result.points) {
    if (point.judgement.verdict == ab::PointVerdict::kWithheld) continue;
    if (std::isfinite(point.evidence.mde_pct)) {
      mdes.emplace_back(point.concurrency, point.evidence.mde_pct);
    }
  }
  if (mdes.empty()) return "";
  const auto [least, most] = std::minmax_element(
      mdes.begin(), mdes.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  if (most->second <= kMdeSpreadForOneFigure * least->second) {
    return fmt::format("; this run could not have seen changes smaller than {} (the minimum "
                       "detectable effect at {:g}% power, the largest over its points)",
                       magnitude_text(most->second), 100 * ab::kPlanningPower);
  }
  std::string per_point;
  for (std::size_t i = 0; i < mdes.size(); ++i) {
    per_point += (i == 0 ? "" : i + 1 == mdes.size() ? " and " : ", ") +
                 fmt::format("{} at {}", magnitude_text(mdes[i].second),
                             point_label(mdes[i].first));
  }
  return fmt::format("; this run could not have seen changes smaller than {} (the minimum "
                     "detectable effect at {:g}% power)",
                     per_point, 100 * ab::kPlanningPower);
}

// What an INVALID arm's record holds: an arm can pass the reference check at the first points
// and fail at a later one; its samples from before stay in results.json but out of the analysis.
std::string invalid_text(const ab::RunRecord& record, const ab::ArmRecord& arm) {
  std::vector<int> timed_points;
  for (const ab::Sample& sample : record.samples) {
    if (&record.arms[sample.arm] == &arm &&
        std::find(timed_points.begin(), timed_points.end(), sample.point) == timed_points.end()) {
      timed_points.push_back(sample.point);
    }
  }
  if (timed_points.empty()) {
    return fmt::format("INVALID ({}): never timed", or_unknown(arm.invalid_reason));
  }
  return fmt::format(
      "INVALID ({}): timed at {} earlier point{} before that, samples kept in results.json "
      "but left out of the analysis",
      or_unknown(arm.invalid_reason), timed_points.size(), timed_points.size() == 1 ? "" : "s");
}

std::string variant_sentence(const ab::RunRecord& record, const ab::ArmRecord& arm) {
  const std::string prefix = arm.name + ": ";
  if (!arm.valid) {
    return prefix + invalid_text(record, arm) + ".";
  }
  const ab::VariantResult* result = variant_result(record, arm.name);
  if (!result) return prefix + "no analysis.";

  std::vector<Finding> faster, slower, small, within, ambiguous, withheld;
  std::optional<int> most_rounds_to_settle;
  for (const ab::PointResult& point : result->points) {
    const Finding finding{point.concurrency, point.evidence.change.change_pct};
    switch (point.judgement.verdict) {
      case ab::PointVerdict::kFaster:
        faster.push_back(finding);
        break;
      case ab::PointVerdict::kSlower:
        slower.push_back(finding);
        break;
      case ab::PointVerdict::kSmallChange:
        small.push_back(finding);
        break;
      case ab::PointVerdict::kWithinNoise:
        within.push_back(finding);
        break;
      case ab::PointVerdict::kAmbiguous:
        ambiguous.push_back(finding);
        if (point.judgement.rounds_to_settle) {
          most_rounds_to_settle =
              std::max(most_rounds_to_settle.value_or(0), *point.judgement.rounds_to_settle);
        }
        break;
      case ab::PointVerdict::kWithheld:
        withheld.push_back(finding);
        break;
    }
  }
  const ab::Settings& settings = record.experiment.stats;
  const std::string threshold = threshold_text(settings.min_effect_pct);
  const std::size_t points = result->points.size();
  const std::size_t sweep_points = record.points.size();
  const auto clause = [&](const std::vector<Finding>& findings, const std::string& word,
                          bool with_range) {
    std::string text = word + " " + where_text(findings, sweep_points);
    if (with_range) text += " " + range_text(findings);
    return text;
  };
  // "within noise at C1 and C4 (largest change +0.3%)"
  const auto within_clause = [&](bool with_largest) {
    std::string text = clause(within, "within noise", false);
    if (!with_largest) return text;
    double largest = 0;
    for (const Finding& finding : within) {
      if (std::abs(finding.change_pct) > std::abs(largest)) largest = finding.change_pct;
    }
    return text + fmt::format(" (largest change {})", short_percent(largest));
  };
  const auto withheld_clause = [&]() {
    return clause(withheld, "withheld", false) + " (the A/A check failed there)";
  };
  // The points that decided nothing, after the ones that decided the verdict.
  const auto rest = [&]() {
    std::string text;
    if (small.size() == 1) {
      text += fmt::format(", a small change at {} ({}, below the {} that matters)",
                          point_label(small.front().concurrency),
                          short_percent(small.front().change_pct), threshold);
    } else if (!small.empty()) {
      text += ", " + clause(small, "small changes", true) +
              fmt::format(", below the {} that matters", threshold);
    }
    if (!within.empty()) text += ", " + within_clause(false);
    if (!ambiguous.empty()) {
      text += ", " + clause(ambiguous, "ambiguous", false);
      if (most_rounds_to_settle) {
        text += fmt::format(" ({}≈ {} rounds in all would settle {}{})",
                            ambiguous.size() > 1 ? "up to " : "",
                            group_thousands(*most_rounds_to_settle),
                            ambiguous.size() > 1 ? "them" : "it",
                            beyond_settings_text(*most_rounds_to_settle, settings));
      }
    }
    if (!withheld.empty()) text += ", " + withheld_clause();
    return text;
  };

  std::string text = prefix + std::string(ab::to_string(result->verdict)) + ", ";
  switch (result->verdict) {
    case ab::VariantVerdict::kRejected:
      text += clause(slower, "slower", true) + rest();
      break;
    case ab::VariantVerdict::kAccepted:
      text += clause(faster, "faster", true) + rest();
      break;
    case ab::VariantVerdict::kMixed:
      text += clause(faster, "faster", true) + " but " + clause(slower, "slower", true) + rest();
      break;
    case ab::VariantVerdict::kInconclusive:
      if (points == 0) {
        text += "no sweep point measured";
      } else if (!within.empty() && within.size() + withheld.size() == points) {
        text += within_clause(true);
        if (!withheld.empty()) text += ", " + withheld_clause();
      } else {
        const std::string tail = rest();
        text += tail.substr(2);  // rest() begins with ", "
      }
      break;
  }
  text += unmeasured_text(points, sweep_points);
  if (result->verdict == ab::VariantVerdict::kInconclusive) text += undetectable_text(*result);
  text += arm.arm.prediction_pct
              ? fmt::format("; predicted {}.", short_percent(*arm.arm.prediction_pct))
              : "; no prediction.";
  return text;
}

// ---------------------------------------------------------------------------------------------
// Sections

// The environment: what ran the arms, the host, and how busy it was at the start and at the
// end, with a warning when other processes held the CPUs (ab/environment.h decides when).
void environment_lines(std::ostream& out, const ab::RunRecord& record) {
  const ab::EnvironmentRecord& environment = record.environment;
  const std::string commit = or_unknown(environment.commit);
  if (environment.backend == Backend::kCpu) {
    out << fmt::format("- **Environment.** The cpu backend on host {}; commit `{}`.\n",
                       ab::host_text(environment), commit);
  } else if (environment.backend == Backend::kNone) {
    out << fmt::format(
        "- **Environment.** Command arms, no kernel backend, on host {}; GPUs visible to the "
        "commands: {}; commit `{}`.\n",
        ab::host_text(environment), or_unknown(environment.gpu), commit);
  } else {
    out << fmt::format(
        "- **Environment.** {}{}; SM clock {} at the start, peak {}; memory clock {}; power "
        "limit {}; driver {}; CUDA runtime {}; commit `{}`; host {}; backend {}.\n",
        or_unknown(environment.gpu),
        environment.sm_count > 0 ? fmt::format(" ({} SMs)", environment.sm_count) : "",
        mhz_text(environment.sm_clock_mhz), mhz_text(environment.max_sm_clock_mhz),
        mhz_text(environment.mem_clock_mhz),
        environment.power_limit_w > 0 ? fmt::format("{:.0f} W", environment.power_limit_w)
                                      : "unknown",
        or_unknown(environment.driver),
        or_unknown(environment.cuda_runtime), commit, ab::host_text(environment),
        environment.backend ? backend_name(*environment.backend) : "unknown");
  }
  const auto read = [](const ab::HostLoad& load) {
    return load.load_1min.has_value() || load.other_cpu_share.has_value();
  };
  if (!read(environment.load_at_start) && !read(environment.load_at_end)) {
    out << "- **Host load.** Not recorded.\n";
    return;
  }
  out << fmt::format("- **Host load.** At the start: {}. At the end: {}.\n",
                     ab::start_load_text(environment),
                     read(environment.load_at_end) ? ab::end_load_text(environment)
                                                   : "not read (the run had not ended)");
  for (const auto& warning :
       {ab::start_load_warning(environment), ab::end_load_warning(environment)}) {
    if (warning) out << fmt::format("- **Warning:** {}.\n", *warning);
  }
}

// Samples that gave no value, per arm and point with the last reason: a timing out or failing
// command must be visible, not only as a missing number.
void failed_samples(std::ostream& out, const ab::RunRecord& record) {
  if (record.failures.empty()) {
    out << "- **Failed samples.** None.\n";
    return;
  }
  struct Tally {
    int count = 0;
    std::string last_reason;
  };
  std::map<std::pair<int, int>, Tally> tallies;  // (arm, point)
  for (const ab::SampleFailure& failure : record.failures) {
    Tally& tally = tallies[{failure.arm, failure.point}];
    ++tally.count;
    tally.last_reason = failure.reason;
  }
  std::vector<std::string> parts;
  for (const auto& [where, tally] : tallies) {
    const auto [arm, point] = where;
    const bool known = arm >= 0 && arm < static_cast<int>(record.arms.size()) && point >= 0 &&
                       point < static_cast<int>(record.points.size());
    parts.push_back(fmt::format(
        "{} at {}: {} (last: {})", known ? record.arms[arm].name : "unknown arm",
        known ? point_label(record.points[point].concurrency) : "unknown point", tally.count,
        tally.last_reason));
  }
  out << fmt::format("- **Failed samples.** {} in all, left out of every statistic; {}.\n",
                     record.failures.size(), fmt::join(parts, "; "));
}

void what_was_tested(std::ostream& out, const ab::RunRecord& record) {
  const ab::Experiment& experiment = record.experiment;
  out << "## What was tested\n\n";
  // What ran the arms, as recorded; records without a backend fall back to the declared one.
  ab::EnvironmentRecord ran_on = record.environment;
  if (!ran_on.backend) ran_on.backend = experiment.backend;
  out << fmt::format("Experiment `{}`{} {}: {} variant{} against a baseline. The metric is "
                     "{}.\n\n",
                     experiment.name,
                     experiment.source_path.empty()
                         ? ""
                         : fmt::format(" (file `{}`)", experiment.source_path),
                     ab::ran_on_text(ran_on), experiment.variants.size(),
                     experiment.variants.size() == 1 ? "" : "s", metric_text(record));
  std::vector<std::vector<std::string>> rows;
  for (const ab::ArmRecord& arm : record.arms) {
    rows.push_back({arm.name, role_text(arm.role), arm.config_text, hashes_text(arm),
                    arm.role == ab::ArmRole::kVariant ? prediction_text(arm.arm) : "",
                    arm.valid ? "valid" : "INVALID: " + or_unknown(arm.invalid_reason)});
  }
  print_table(out,
              {{"arm"}, {"role"}, {"config"}, {"code hash"}, {"prediction"}, {"status"}},
              std::move(rows));
  out << "Code hashes are shortened; results.json and fingerprint.json hold them whole. An "
         "INVALID arm failed the reference check at some point, or gave no valid sample there, "
         "and was not timed from then on.";
  if (std::any_of(record.arms.begin(), record.arms.end(),
                  [](const ab::ArmRecord& arm) { return !arm.binary_hash.empty(); })) {
    out << " A Python arm's code hash covers its module's source, its params and the torch and "
           "Triton versions; \"binaries\" hashes the Triton kernels it compiled in this run.";
  }
  out << "\n\n";
}

void why(std::ostream& out, const ab::RunRecord& record) {
  out << "## Why\n\n";
  const std::string& hypothesis = record.experiment.hypothesis;
  if (hypothesis.empty()) {
    out << "No hypothesis was stated.\n\n";
    return;
  }
  std::string line;
  for (std::size_t i = 0; i <= hypothesis.size(); ++i) {
    if (i == hypothesis.size() || hypothesis[i] == '\n') {
      out << (line.empty() ? ">" : "> " + line) << "\n";
      line.clear();
    } else {
      line += hypothesis[i];
    }
  }
  out << "\n";
}

void how(std::ostream& out, const ab::RunRecord& record) {
  const ab::Experiment& experiment = record.experiment;
  const ab::Settings& stats = experiment.stats;
  const ab::EnvironmentRecord& environment = record.environment;
  out << "## How\n\n";

  const std::size_t variants = experiment.variants.size();
  out << fmt::format(
      "- **Arms.** Every round measures each arm once, in a shuffled order: the baseline A, the "
      "baseline again as its own arm A′ (its difference from A is noise by construction, so it "
      "checks the measurement: the A/A check below), and {} variant{}. Each variant is compared "
      "with A over the rounds in which both have a sample, so that a slow round slows both and "
      "cancels out.\n",
      variants, variants == 1 ? "" : "s");

  const bool on_cpu = environment.backend.value_or(experiment.backend) == Backend::kCpu;
  const ab::Sweep& sweep = experiment.sweep;
  std::vector<std::string> concurrency;
  for (const int c : sweep.concurrency) concurrency.push_back(std::to_string(c));
  if (experiment.baseline.is_kernel()) {
    out << fmt::format(
        "- **Sweep.** Concurrency (batch size) {}; layout {}, {} query heads, page size {}; "
        "context length: {}.\n",
        fmt::join(concurrency, ", "), ab::layout_text(sweep), sweep.heads, sweep.page_size,
        context_spec_text(sweep.context));
    const int launches = experiment.measure.launches_per_sample;
    if (on_cpu) {
      out << fmt::format(
          "- **Samples.** One sample is the median time of {} back-to-back calls of the CPU "
          "backend, turned into sequences per second. The CPU has no SM clock: no sample is "
          "flagged throttled.{}\n",
          launches, heat_text(experiment.measure));
    } else {
      out << fmt::format(
          "- **Samples.** One sample is the median time of {} back-to-back CUDA-graph launches, "
          "turned into sequences per second. {}{}{}\n",
          launches, throttle_text(experiment.measure.throttle_fraction),
          heat_text(experiment.measure), instances_text(experiment.measure));
    }
  } else {
    out << fmt::format(
        "- **Sweep.** Concurrency {} (passed to each command as MLALAB_CONCURRENCY).\n",
        fmt::join(concurrency, ", "));
    out << fmt::format("- **Samples.** One sample is one run of the arm's command.{}\n",
                       heat_text(experiment.measure));
  }
  out << fmt::format(
      "- **Rounds per point.** At least {} and at most {}, and at most {} per point. A point "
      "is analysed at its looks only, and stops at one once every variant's comparison has "
      "settled (beyond ±{}, or within it) or its A/A check has failed; otherwise at its round "
      "or time budget (the reasons are in the table below). Budget of the whole run: {:g} "
      "min.\n",
      stats.min_rounds, stats.max_rounds, duration_text(stats.time_budget_s),
      threshold_text(stats.min_effect_pct), experiment.measure.max_minutes);
  out << fmt::format(
      "- **Decision settings.** Threshold T = {} (min_effect_pct, the smallest change that "
      "matters) at every point; α = {:g}, so intervals at {:g}% confidence; seed {} of the "
      "arms' order in each round. A change is the {:g}% trimmed mean of the paired log ratios "
      "ln(variant / A), one per round, as a %, with a Student-t interval; nothing is resampled. "
      "{} A point is FASTER or SLOWER when the corrected test puts its change "
      "beyond ±T; WITHIN_NOISE when its interval lies inside ±T and contains 0 (no change "
      "seen); SMALL_CHANGE when it lies inside ±T but excludes 0 (a real change, smaller than "
      "what matters); AMBIGUOUS otherwise, with the rounds in all that would settle it. A "
      "point's MDE, its minimum detectable effect, is the smallest change its rounds would have "
      "found FASTER or SLOWER with {:g}% probability at its noise.\n",
      threshold_text(stats.min_effect_pct), stats.alpha, confidence_pct(record), stats.seed,
      100 * ab::kTrimFraction, looks_sentence(looks_of(record)), 100 * ab::kPlanningPower);
  out << fmt::format(
      "- **A/A check.** A′ is the baseline again, so A′ − A is no change by construction: at a "
      "point where it moves beyond ±{} by its own test at α (adjusted for the looks), the "
      "design failed to cancel something (an order effect, a noisy neighbour, a drift), and the "
      "point's verdicts are WITHHELD.\n",
      threshold_text(stats.min_effect_pct));
  const std::string note = record.analysis && !record.analysis->correction_note.empty()
                               ? record.analysis->correction_note
                               : ab::correction_method_note(stats);
  out << "- **Multiplicity.** " << note << "\n";
  environment_lines(out, record);
  const int throttled = throttled_count(record);
  const std::size_t total = record.samples.size();
  out << fmt::format("- **Throttled samples excluded.** {} of {}{}.\n", group_thousands(throttled),
                     group_thousands(static_cast<long long>(total)),
                     total > 0 ? fmt::format(" ({:.1f}%)", 100.0 * throttled / total) : "");
  failed_samples(out, record);
  out << fmt::format("- **Time taken.** {}{}.\n\n", duration_text(record.elapsed_s),
                     record.started_utc.empty() ? "" : ", started " + record.started_utc);

  std::vector<std::vector<std::string>> rows;
  for (std::size_t p = 0; p < record.points.size(); ++p) {
    const ab::PointRecord& point = record.points[p];
    rows.push_back({point_label(point.concurrency), context_lengths_text(point.context_lengths),
                    resolved_split_text(point.splits, point.workers).value_or("–"),
                    std::to_string(point.rounds), std::to_string(point.throttled_samples),
                    point_power_text(record, static_cast<int>(p)),
                    duration_text(point.elapsed_s), stop_text(point)});
  }
  if (rows.empty()) {
    out << "No sweep point was measured.\n\n";
    return;
  }
  print_table(out,
              {{"point"}, {"context lengths"}, {"splits", true}, {"rounds", true},
               {"throttled", true}, {"power", true}, {"time", true}, {"stopped because"}},
              std::move(rows));
  out << fmt::format(
      "Splits: the baseline kernel's split count at the point (a balanced split: its workers). "
      "Power: the board's median draw over the point's rounds (nvidia-smi's one-second average, "
      "read after each round, so the arms share it); at the limit: within {:.0f} % of the power "
      "limit, where the GPU lowers its clock to hold it.\n\n",
      100 * (1 - kAtPowerLimitShare));
  for (const ab::PointRecord& point : record.points) {
    for (std::size_t a = 0; a < point.resolved_configs.size(); ++a) {
      if (point.resolved_configs[a].empty()) continue;
      const auto* kernel = std::get_if<ab::KernelArm>(&record.arms[a].arm.config);
      const bool python = kernel != nullptr && !kernel->python.empty();
      out << fmt::format("- {}: '{}' ({}) ran {}\n", point_label(point.concurrency),
                         record.arms[a].name, python ? "Python" : "tuned",
                         point.resolved_configs[a]);
    }
  }
  const bool any_tuned = std::any_of(record.points.begin(), record.points.end(),
                                     [](const ab::PointRecord& point) {
                                       return !point.resolved_configs.empty();
                                     });
  if (any_tuned) out << "\n";
}

void baseline(std::ostream& out, const ab::RunRecord& record) {
  out << "## Baseline\n\n";
  const int baseline_arm = arm_index(record, ab::ArmRole::kBaseline);
  if (baseline_arm < 0 || record.points.empty()) {
    out << "No baseline was measured.\n\n";
    return;
  }
  const std::string unit = metric_unit(record);
  const ab::Settings& settings = record.experiment.stats;
  out << fmt::format(
      "The variance characterization: how much the baseline moves on its own at each point. CV "
      "is the coefficient of variation (standard deviation / mean) of the baseline's "
      "non-throttled samples; A′ − A is the change the A/A comparison shows, with its interval, "
      "and its band, max(|lower|, |upper|) of the interval, the largest change noise alone may "
      "have produced at the point (a dip between two concurrencies must exceed it). The A/A "
      "check tests whether A′ − A lies beyond ±{} (p, adjusted for the looks): ok, or FLAGGED, "
      "and then the point's verdicts are withheld.\n\n",
      threshold_text(settings.min_effect_pct));
  if (!record.analysis) {
    out << "No analysis: too little was measured, so the A/A columns are empty.\n\n";
  }
  std::vector<std::vector<std::string>> rows;
  for (std::size_t p = 0; p < record.points.size(); ++p) {
    const ab::PointRecord& point = record.points[p];
    const std::vector<double> values = arm_values(record, static_cast<int>(p), baseline_arm);
    const ab::PointNoise* noise = point_noise(record, point.concurrency);
    rows.push_back({point_label(point.concurrency),
                    quantity_text(arm_median(record, static_cast<int>(p), baseline_arm)),
                    values.size() >= 2
                        ? fmt::format("{:.2f}%", 100 * coefficient_of_variation(values))
                        : "n/a",
                    noise ? signed_percent(noise->a_a.change_pct, 2) : "–",
                    noise ? interval_text(noise->a_a.interval_pct, 2) : "–",
                    noise ? fmt::format("±{:.2f}%", noise->band_pct) : "–",
                    noise ? a_a_check_text(*noise, settings) : "–",
                    std::to_string(values.size())});
  }
  print_table(out,
              {{"point"}, {fmt::format("median ({})", unit), true}, {"CV", true},
               {"A′ − A", true}, {fmt::format("A/A {:g}% interval", confidence_pct(record)), true},
               {"A/A band", true}, {"A/A check"}, {"samples", true}},
              std::move(rows));
}

void per_variant(std::ostream& out, const ab::RunRecord& record) {
  out << "## Per-variant results\n\n";
  bool any = false;
  for (const ab::ArmRecord& arm : record.arms) {
    if (arm.role != ab::ArmRole::kVariant) continue;
    any = true;
    const ab::VariantResult* result = variant_result(record, arm.name);
    const std::string verdict = !arm.valid ? "INVALID"
                                : result   ? std::string(ab::to_string(result->verdict))
                                           : "no analysis";
    out << fmt::format("### {}: {}\n\n", arm.name, verdict);
    out << fmt::format("Config `{}`, code hash {}; predicted change: {}.\n\n", arm.config_text,
                       hashes_text(arm), prediction_text(arm.arm));
    if (!arm.valid) {
      out << invalid_text(record, arm) << ".\n\n";
      continue;
    }
    if (!result) {
      out << "No analysis: too little was measured.\n\n";
      continue;
    }
    const std::string predicted = prediction_text(arm.arm);
    const ab::Settings& settings = record.experiment.stats;
    std::vector<std::vector<std::string>> rows;
    double lowest = std::numeric_limits<double>::infinity();
    double highest = -lowest;
    for (const ab::PointResult& point : result->points) {
      const ab::PointNoise* noise = point_noise(record, point.concurrency);
      const ab::Change& change = point.evidence.change;
      if (std::isfinite(change.change_pct)) {
        lowest = std::min(lowest, change.change_pct);
        highest = std::max(highest, change.change_pct);
      }
      rows.push_back({point_label(point.concurrency), quantity_text(point.variant_median),
                      signed_percent(change.change_pct), interval_text(change.interval_pct),
                      magnitude_text(point.evidence.mde_pct),
                      fmt::format("{} ({})", p_text(point.evidence.p_value),
                                  p_text(point.evidence.p_adjusted)),
                      std::to_string(change.paired_rounds),
                      verdict_cell(point, noise, settings), predicted});
    }
    print_table(out,
                {{"point"}, {fmt::format("median ({})", metric_unit(record)), true},
                 {"measured change", true},
                 {fmt::format("{:g}% interval", confidence_pct(record)), true},
                 {"MDE", true}, {"p (adjusted)", true}, {"rounds", true}, {"verdict"},
                 {"predicted", true}},
                std::move(rows));
    if (std::isfinite(lowest)) {
      const std::string measured =
          lowest == highest ? signed_percent(lowest)
                            : fmt::format("{} to {}", signed_percent(lowest),
                                          signed_percent(highest));
      out << (arm.arm.prediction_pct
                  ? fmt::format("Predicted {}; measured {}. ", predicted, measured)
                  : fmt::format("No prediction; measured {}. ", measured));
    }
    out << fmt::format(
        "Changes are against the baseline A over paired rounds (the trimmed mean of the log "
        "ratios); the threshold is ±{0} at every point. p is the test of \"|change| ≤ {0}\", "
        "adjusted for the point's looks, before and after the multiplicity correction. MDE: the "
        "smallest change the point's rounds would have found FASTER or SLOWER with {1:g}% "
        "probability at its noise.\n\n",
        threshold_text(settings.min_effect_pct), 100 * ab::kPlanningPower);
  }
  if (!any) out << "No variants.\n\n";
}

// The two pictures, each with a line on how to read it; their names come from their writers.
void pictures(std::ostream& out, const ab::RunRecord& record) {
  out << "## Pictures\n\n";
  const double confidence = confidence_pct(record);
  out << fmt::format(
      "![metric against concurrency]({})\n\n{} against concurrency, one line per arm; shaded: "
      "the A/A noise band around the baseline and each variant's {:g}% interval.\n\n",
      ThroughputSvg().file_name(),
      metric_direction(record) == ab::Direction::kHigherIsBetter ? "Throughput"
                                                                 : "The metric (lower is better)",
      confidence);
  out << fmt::format(
      "![change against the baseline]({})\n\nEach variant's change against the baseline in % "
      "(+ = faster) with its {:g}% interval, over the grey band of ±T = ±{}: FASTER (▲) or "
      "SLOWER (▼) beyond it by the corrected test, WITHIN_NOISE (●) inside it and around 0, "
      "SMALL_CHANGE (■) inside it but away from 0, AMBIGUOUS (◇) otherwise, WITHHELD (✕) where "
      "the A/A check failed; the dashed line is the prediction.\n\n",
      ChangeSvg().file_name(), confidence, threshold_text(record.experiment.stats.min_effect_pct));
}

void monotonicity(std::ostream& out, const ab::RunRecord& record) {
  out << "## Monotonicity\n\n";
  if (!record.analysis) {
    out << "Not checked: no analysis.\n\n";
    return;
  }
  if (record.analysis->direction != ab::Direction::kHigherIsBetter) {
    out << "Not checked: the metric is a latency, for which no monotone shape is expected.\n\n";
    return;
  }
  std::vector<ab::Dip> dips;
  try {
    dips = ab::find_dips(ab::throughput_curves(*record.analysis));
  } catch (const std::exception& error) {
    out << fmt::format("Not checked: {}.\n\n", error.what());
    return;
  }
  out << "More concurrent requests should never give less total throughput; a fall from one "
         "concurrency to the next that exceeds the noise band (the larger A/A band of the two "
         "points) points at a scheduling or occupancy problem.\n\n";
  if (dips.empty()) {
    out << "Dips: none.\n\n";
    return;
  }
  const auto split_at = [&](int concurrency) -> std::optional<std::string> {
    for (const ab::PointRecord& point : record.points) {
      if (point.concurrency == concurrency) return resolved_split_text(point.splits, point.workers);
    }
    return std::nullopt;
  };
  for (const ab::Dip& dip : dips) {
    const std::optional<std::string> from_split = split_at(dip.from_concurrency);
    const std::optional<std::string> to_split = split_at(dip.to_concurrency);
    out << fmt::format("- **{}**: {} → {}: throughput falls by {:.1f}%, beyond the ±{:.1f}% "
                       "band{}.\n",
                       dip.arm, point_label(dip.from_concurrency), point_label(dip.to_concurrency),
                       dip.dip_pct, dip.band_pct,
                       from_split && to_split && *from_split != *to_split
                           ? fmt::format(" (the baseline's splits go {} → {})", *from_split,
                                         *to_split)
                           : "");
  }
  out << "\n";
}

void how_to_reproduce(std::ostream& out, const ab::RunRecord& record) {
  out << "## How to reproduce\n\n";
  const std::string commit = or_unknown(record.environment.commit);
  const std::string build =
      record.build_command.empty() ? "bash scripts/build.sh" : record.build_command;
  out << fmt::format("Build commit `{}` with the selection of kernel variants and architectures "
                     "that this run's binary had, and run the experiment:\n\n",
                     commit);
  print_fenced(out,
               fmt::format("git checkout {}\n{}\nbuild/bin/{}", commit, build,
                           record.command_line.empty()
                               ? "mlalab ab " + or_unknown(record.experiment.source_path)
                               : record.command_line),
               "bash");
  out << fmt::format("The experiment file{} as it was read:\n\n",
                     record.experiment.source_path.empty()
                         ? ""
                         : fmt::format(" (`{}`)", record.experiment.source_path));
  print_fenced(out, record.experiment.source_text, "toml");
  out << fmt::format("`mlalab verify fingerprint.json --experiment FILE` checks that a build "
                     "and {} match this run's, and the experiment its sweep, before comparing "
                     "numbers.\n",
                     record.environment.backend == Backend::kCuda ? "GPU" : "host");
}

}  // namespace

std::string conclusion_paragraph(const ab::RunRecord& record) {
  std::vector<std::string> sentences;
  if (record.partial) sentences.push_back("From a partial run:");
  if (!record.analysis) {
    sentences.push_back("no conclusion, as the run measured too little for an analysis.");
  }
  for (const ab::ArmRecord& arm : record.arms) {
    if (arm.role != ab::ArmRole::kVariant) continue;
    if (!record.analysis && arm.valid) continue;
    sentences.push_back(variant_sentence(record, arm));
  }
  if (sentences.empty()) return "No variants were tested.";
  std::string text;
  for (const std::string& sentence : sentences) text += (text.empty() ? "" : " ") + sentence;
  return text;
}

void MarkdownReport::write(const ab::RunRecord& record, std::ostream& out) const {
  out << "# A/B experiment: " << record.experiment.name << "\n\n";
  if (record.partial) {
    out << fmt::format("**PARTIAL RESULTS: {}.** Points that had not stopped when the run ended "
                       "rest on fewer rounds than planned (see How).\n\n",
                       record.partial_reason.empty() ? "the run ended before every point stopped"
                                                     : record.partial_reason);
  }
  out << fmt::format("{} · {} · commit `{}`\n\n", or_unknown(record.started_utc),
                     record.environment.backend == Backend::kCuda ? or_unknown(record.environment.gpu)
                                                          : ab::host_text(record.environment),
                     or_unknown(record.environment.commit));
  what_was_tested(out, record);
  why(out, record);
  how(out, record);
  baseline(out, record);
  per_variant(out, record);
  pictures(out, record);
  monotonicity(out, record);
  out << "## Conclusion\n\n" << conclusion_paragraph(record) << "\n\n";
  how_to_reproduce(out, record);
}

}  // namespace mlalab::report
