#include "bench/timeline_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>

#include "core/median.h"
#include "core/number_text.h"

namespace mlalab::bench {
namespace {

constexpr double kNanosPerMicro = 1000.0;

std::uint64_t first_start_ns(const std::vector<kernels::CtaTimeline>& records) {
  std::uint64_t first = std::numeric_limits<std::uint64_t>::max();
  for (const auto& cta : records) first = std::min(first, cta.start_ns);
  return first;
}

int recorded_parts(const kernels::CtaTimeline& cta) {
  return std::clamp(cta.parts, 0, kernels::kTimelineParts);
}

double micros_since(std::uint64_t ns, std::uint64_t origin_ns) {
  return static_cast<double>(ns - origin_ns) / kNanosPerMicro;
}

std::uint64_t end_ns(const kernels::CtaTimeline& cta) {
  const int parts = recorded_parts(cta);
  return parts > 0 ? cta.part[parts - 1].end_ns : cta.start_ns;
}

// Cycles from `from` to `to`, two reads of one SM's clock (low 32 bits, so modulo 2^32).
double cycles_between(std::uint32_t from, std::uint32_t to) {
  return static_cast<double>(static_cast<std::int32_t>(to - from));
}

// The CTA's SM clock in MHz from its start to its last recorded part, or nothing where it ran
// under 1 µs (%globaltimer counts in steps of tens of nanoseconds).
std::optional<double> clock_mhz(const kernels::CtaTimeline& cta) {
  const int parts = recorded_parts(cta);
  if (parts == 0) return std::nullopt;
  const kernels::TimelinePart& last = cta.part[parts - 1];
  const double ns = static_cast<double>(last.end_ns - cta.start_ns);
  if (last.end_ns < cta.start_ns || ns < kNanosPerMicro) return std::nullopt;
  return cycles_between(cta.start_clock, last.end_clock) / ns * kNanosPerMicro;
}

Spread spread_of(std::vector<double> values) {
  Spread spread;
  spread.tiles = static_cast<int>(values.size());
  if (values.empty()) return spread;
  std::sort(values.begin(), values.end());
  const auto at = [&](double fraction) {
    return values[static_cast<std::size_t>(
        std::lround(fraction * static_cast<double>(values.size() - 1)))];
  };
  spread.p10 = at(0.1);
  spread.p90 = at(0.9);
  spread.mean =
      std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  spread.median = median(std::move(values));
  return spread;
}

// Cycles from the CTA's start to a prologue event, or nothing where it was not recorded (the
// kernel sets each to the start first: q by cp.async has no issue event).
std::optional<double> recorded_event(const kernels::CtaTimeline& cta, std::uint32_t clock) {
  if (clock == cta.start_clock) return std::nullopt;
  return cycles_between(cta.start_clock, clock);
}

int recorded_tiles(const kernels::CtaTimeline& cta) {
  return std::clamp(cta.ring_tiles, 0, kernels::kTimelineTiles);
}

// "median [10th, 90th]", cycles grouped by thousands.
std::string figure_of(const Spread& spread) {
  return fmt::format("{} [{}, {}]", group_thousands(std::lround(spread.median)),
                     group_thousands(std::lround(spread.p10)),
                     group_thousands(std::lround(spread.p90)));
}

nlohmann::json spread_json(const Spread& spread) {
  return {{"median", spread.median}, {"p10", spread.p10}, {"p90", spread.p90},
          {"mean", spread.mean}, {"tiles", spread.tiles}};
}

// The tile events, in TimelineTile's order: each CTA's ring.tiles entry lists them so, as
// cycles since the CTA's start.
constexpr std::array<std::uint32_t kernels::TimelineTile::*, 10> kTileEvents{
    &kernels::TimelineTile::free_wait,    &kernels::TimelineTile::first_free,
    &kernels::TimelineTile::first_issued, &kernels::TimelineTile::rest_free,
    &kernels::TimelineTile::rest_issued,  &kernels::TimelineTile::landed_wait,
    &kernels::TimelineTile::first_landed, &kernels::TimelineTile::rest_landed,
    &kernels::TimelineTile::first_freed,  &kernels::TimelineTile::rest_freed};
constexpr std::array<const char*, 10> kTileEventNames{
    "free_wait",   "first_free",   "first_issued", "rest_free",   "rest_issued",
    "landed_wait", "first_landed", "rest_landed",  "first_freed", "rest_freed"};
// kTileEvents from here on are the MMA warps': null in the JSON where they record none.
constexpr std::size_t kFirstMmaEvent = 5;

nlohmann::json ring_json(const RingSummary& summary) {
  nlohmann::json by_stage = nlohmann::json::array();
  for (const StageRing& stage : summary.by_stage) {
    by_stage.push_back({{"tile_period", spread_json(stage.tile_period)},
                        {"mma_wait", spread_json(stage.mma_wait)}});
  }
  nlohmann::json events = nlohmann::json::array();
  for (const char* name : kTileEventNames) events.push_back(name);
  return {{"ctas", summary.ctas},
          {"tiles", summary.tiles},
          {"unit", "SM cycles"},
          {"tile_events", std::move(events)},  // the order of each CTA's ring.tiles entries
          {"stage_wait", spread_json(summary.stage_wait)},
          {"tile_period", spread_json(summary.tile_period)},
          {"mma_wait", spread_json(summary.mma_wait)},
          {"issue_to_landed", spread_json(summary.issue_to_landed)},
          {"free_to_issue", spread_json(summary.free_to_issue)},
          {"free_to_seen", spread_json(summary.free_to_seen)},
          {"issue_time", spread_json(summary.issue_time)},
          {"free_to_ask", spread_json(summary.free_to_ask)},
          {"rest_after_first", spread_json(summary.rest_after_first)},
          {"by_stage", std::move(by_stage)},
          {"prologue",
           {{"work_known", spread_json(summary.prologue.work_known)},
            {"q_issued", spread_json(summary.prologue.q_issued)},
            {"first_issued", spread_json(summary.prologue.first_issued)},
            {"first_landed", spread_json(summary.prologue.first_landed)}}},
          {"pair_merge",
           {{"stats_landed", spread_json(summary.merge.stats_landed)},
            {"shares_sent", spread_json(summary.merge.shares_sent)},
            {"rows_landed", spread_json(summary.merge.rows_landed)},
            {"staged", spread_json(summary.merge.staged)},
            {"stored", spread_json(summary.merge.stored)}}}};
}

// "; by stage (tile t uses stage t mod 2): 0: a tile every 4,330 [...], mean 4,346, the MMA
// warps waited 114 [...]; 1: ...".
std::string by_stage_text(const std::vector<StageRing>& by_stage) {
  if (by_stage.size() < 2) return "";
  const auto mean = [](const Spread& spread) {
    return group_thousands(std::lround(spread.mean));
  };
  std::string text = fmt::format("; by stage (tile t uses stage t mod {}):", by_stage.size());
  for (std::size_t stage = 0; stage < by_stage.size(); ++stage) {
    const StageRing& ring = by_stage[stage];
    text += fmt::format(" {}: a tile every {}, mean {}, the MMA warps waited {}, mean {};",
                        stage, figure_of(ring.tile_period), mean(ring.tile_period),
                        figure_of(ring.mma_wait), mean(ring.mma_wait));
  }
  text.pop_back();
  return text;
}

// "; the prologue, cycles from the CTA's start: work known 1,210 [...], q issued 1,830 [...],
// the first tile's first piece issued 2,450 [...], landed 7,600 [...]".
std::string prologue_text(const RingPrologue& prologue) {
  if (prologue.first_issued.tiles == 0) return "";
  std::string text =
      fmt::format("; the prologue, cycles from the CTA's start: work known {}",
                  figure_of(prologue.work_known));
  if (prologue.q_issued.tiles > 0) text += ", q issued " + figure_of(prologue.q_issued);
  text += ", the first tile's first piece issued " + figure_of(prologue.first_issued);
  if (prologue.first_landed.tiles > 0) text += ", landed " + figure_of(prologue.first_landed);
  return text;
}

// "; the pair merge, cycles from its entry: the other's statistics landed 1,900 [...], ...".
std::string merge_text(const PairMerge& merge) {
  if (merge.stored.tiles == 0) return "";
  return fmt::format(
      "; the pair merge, cycles from its entry: the other's statistics landed {}, this CTA's "
      "share sent {}, the other's share landed {}, the rows staged {}, stored {} ({})",
      figure_of(merge.stats_landed), figure_of(merge.shares_sent), figure_of(merge.rows_landed),
      figure_of(merge.staged), figure_of(merge.stored), counted(merge.stored.tiles, "CTA"));
}

}  // namespace

RingSummary summarize_ring(const std::vector<kernels::CtaTimeline>& records) {
  RingSummary summary;
  std::vector<double> stage_wait, period, mma_wait, issue_to_landed, free_to_issue, free_to_seen,
      issue_time, free_to_ask, rest_after_first;
  std::vector<std::vector<double>> stage_period, stage_mma_wait;  // [stage]
  std::vector<double> work_known, q_issued, first_issued, first_landed;
  std::vector<double> stats_landed, shares_sent, rows_landed, staged, stored;
  for (const auto& cta : records) {
    // Each step after the merge's entry, where the CTA recorded both.
    const auto merge_step = [&](std::uint32_t clock, std::vector<double>& into) {
      if (recorded_event(cta, cta.merge_begin_clock) && recorded_event(cta, clock)) {
        into.push_back(cycles_between(cta.merge_begin_clock, clock));
      }
    };
    merge_step(cta.merge_stats_clock, stats_landed);
    merge_step(cta.merge_sent_clock, shares_sent);
    merge_step(cta.merge_rows_clock, rows_landed);
    merge_step(cta.merge_staged_clock, staged);
    merge_step(cta.merge_stored_clock, stored);
    const int stages = cta.ring_stages;
    const int tiles = recorded_tiles(cta);
    if (stages <= 0 || tiles == 0) continue;
    const auto since_start = [&](std::uint32_t clock) {
      return cycles_between(cta.start_clock, clock);
    };
    work_known.push_back(since_start(cta.work_known_clock));
    if (const auto q = recorded_event(cta, cta.q_issued_clock)) q_issued.push_back(*q);
    first_issued.push_back(since_start(cta.tile[0].first_issued));
    if (cta.mma_events) first_landed.push_back(since_start(cta.tile[0].first_landed));
    if (tiles <= stages) continue;
    ++summary.ctas;
    if (cta.mma_events && static_cast<int>(stage_period.size()) < stages) {
      stage_period.resize(stages);
      stage_mma_wait.resize(stages);
    }
    for (int t = stages; t < tiles; ++t) {
      const kernels::TimelineTile& tile = cta.tile[t];
      const kernels::TimelineTile& before = cta.tile[t - stages];  // its stage's last tile
      ++summary.tiles;
      stage_wait.push_back(cycles_between(tile.free_wait, tile.first_issued));
      issue_time.push_back(cycles_between(tile.first_free, tile.first_issued));
      if (!cta.mma_events) continue;
      if (t > stages) {
        period.push_back(cycles_between(cta.tile[t - 1].first_landed, tile.first_landed));
        stage_period[t % stages].push_back(period.back());
      }
      // Until the piece its S begins on had landed: the first, or the rest where the kernel
      // waits for that first (the wait that returns first is the first wait).
      const std::uint32_t began = cycles_between(tile.first_landed, tile.rest_landed) < 0
                                      ? tile.rest_landed
                                      : tile.first_landed;
      mma_wait.push_back(cycles_between(tile.landed_wait, began));
      stage_mma_wait[t % stages].push_back(mma_wait.back());
      if (cycles_between(tile.landed_wait, tile.first_issued) > 0) {
        issue_to_landed.push_back(cycles_between(tile.first_issued, tile.first_landed));
      }
      free_to_issue.push_back(cycles_between(before.first_freed, tile.first_issued));
      free_to_seen.push_back(cycles_between(before.first_freed, tile.first_free));
      free_to_ask.push_back(cycles_between(before.first_freed, tile.landed_wait));
      rest_after_first.push_back(cycles_between(tile.first_landed, tile.rest_landed));
    }
  }
  summary.stage_wait = spread_of(std::move(stage_wait));
  summary.tile_period = spread_of(std::move(period));
  summary.mma_wait = spread_of(std::move(mma_wait));
  summary.issue_to_landed = spread_of(std::move(issue_to_landed));
  summary.free_to_issue = spread_of(std::move(free_to_issue));
  summary.free_to_seen = spread_of(std::move(free_to_seen));
  summary.issue_time = spread_of(std::move(issue_time));
  summary.free_to_ask = spread_of(std::move(free_to_ask));
  summary.rest_after_first = spread_of(std::move(rest_after_first));
  for (std::size_t stage = 0; stage < stage_period.size(); ++stage) {
    summary.by_stage.push_back({.tile_period = spread_of(std::move(stage_period[stage])),
                                .mma_wait = spread_of(std::move(stage_mma_wait[stage]))});
  }
  summary.prologue = {.work_known = spread_of(std::move(work_known)),
                      .q_issued = spread_of(std::move(q_issued)),
                      .first_issued = spread_of(std::move(first_issued)),
                      .first_landed = spread_of(std::move(first_landed))};
  summary.merge = {.stats_landed = spread_of(std::move(stats_landed)),
                   .shares_sent = spread_of(std::move(shares_sent)),
                   .rows_landed = spread_of(std::move(rows_landed)),
                   .staged = spread_of(std::move(staged)),
                   .stored = spread_of(std::move(stored))};
  return summary;
}

std::string ring_summary_text(const RingSummary& summary) {
  const std::string merge = merge_text(summary.merge);
  if (summary.tiles == 0) {  // no tile reuses a stage: the pair merge alone, if any
    return merge.empty() ? "" : merge.substr(2);  // without its "; "
  }
  const std::string prologue_and_merge = prologue_text(summary.prologue) + merge;
  std::string text = fmt::format(
      "ring, {} of {} that reuse a stage, SM cycles, median [10th, 90th percentile]: the copy "
      "issuer waited {} for a tile's stage and took {} from the free to the first piece's issue",
      counted(summary.tiles, "tile"), counted(summary.ctas, "CTA"), figure_of(summary.stage_wait),
      figure_of(summary.issue_time));
  if (summary.mma_wait.tiles == 0) {
    return text + " (the MMA warps record no events here)" + prologue_and_merge;
  }
  return text + fmt::format(
                    "; a tile every {}; the MMA warps waited {} for the piece S begins on; its "
                    "stage's first piece was freed {} before the MMA warps asked for it, the "
                    "issuer saw it {} and issued the piece {} after the free, which landed {} "
                    "after its issue where they were waiting already ({}); the rest's wait "
                    "returned {} after the first's",
                    figure_of(summary.tile_period), figure_of(summary.mma_wait),
                    figure_of(summary.free_to_ask), figure_of(summary.free_to_seen),
                    figure_of(summary.free_to_issue), figure_of(summary.issue_to_landed),
                    counted(summary.issue_to_landed.tiles, "tile"),
                    figure_of(summary.rest_after_first)) +
         by_stage_text(summary.by_stage) + prologue_and_merge;
}

TimelineSummary summarize_timeline(const std::vector<kernels::CtaTimeline>& records) {
  TimelineSummary summary;
  if (records.empty()) return summary;
  const std::uint64_t origin = first_start_ns(records);
  std::vector<double> ends, clocks;
  ends.reserve(records.size());
  for (const auto& cta : records) {
    const double end = micros_since(end_ns(cta), origin);
    ends.push_back(end);
    if (const auto mhz = clock_mhz(cta)) clocks.push_back(*mhz);
    summary.last_start_us = std::max(summary.last_start_us, micros_since(cta.start_ns, origin));
    PartsGroup& group = summary.by_parts[cta.parts];
    group.mean_end_us += end;  // a sum until divided below
    group.max_end_us = std::max(group.max_end_us, end);
    ++group.ctas;
    if (cta.parts > kernels::kTimelineParts) ++summary.truncated_ctas;
  }
  for (auto& [parts, group] : summary.by_parts) group.mean_end_us /= group.ctas;
  summary.ctas = static_cast<int>(records.size());
  summary.min_end_us = *std::min_element(ends.begin(), ends.end());
  summary.max_end_us = *std::max_element(ends.begin(), ends.end());
  summary.median_end_us = median(std::move(ends));
  if (!clocks.empty()) {
    summary.min_clock_mhz = *std::min_element(clocks.begin(), clocks.end());
    summary.max_clock_mhz = *std::max_element(clocks.begin(), clocks.end());
    summary.median_clock_mhz = median(std::move(clocks));
  }
  return summary;
}

std::string timeline_summary_text(const TimelineSummary& summary) {
  if (summary.ctas == 0) return "no CTA recorded";
  std::string text = fmt::format(
      "{} CTAs: started within {:.1f} µs, ended at {:.1f} / {:.1f} / {:.1f} µs (min / median / "
      "max); by parts:",
      summary.ctas, summary.last_start_us, summary.min_end_us, summary.median_end_us,
      summary.max_end_us);
  for (const auto& [parts, group] : summary.by_parts) {
    text += fmt::format(" {}: {} CTAs, mean {:.1f}, max {:.1f};", parts, group.ctas,
                        group.mean_end_us, group.max_end_us);
  }
  text.pop_back();
  if (summary.median_clock_mhz > 0.0) {
    const auto mhz = [](double value) { return group_thousands(std::lround(value)); };
    text += fmt::format("; SM clock {} / {} / {} MHz", mhz(summary.min_clock_mhz),
                        mhz(summary.median_clock_mhz), mhz(summary.max_clock_mhz));
  }
  if (summary.truncated_ctas > 0) {
    text += fmt::format(" ({} CTAs had more than {} parts: the first {} recorded)",
                        summary.truncated_ctas, kernels::kTimelineParts, kernels::kTimelineParts);
  }
  return text;
}

nlohmann::json timeline_json(const std::vector<BenchRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const BenchRow& row : rows) {
    if (row.timeline.empty()) continue;
    const std::uint64_t origin = first_start_ns(row.timeline);
    nlohmann::json ctas = nlohmann::json::array();
    for (std::size_t index = 0; index < row.timeline.size(); ++index) {
      const kernels::CtaTimeline& cta = row.timeline[index];
      nlohmann::json parts = nlohmann::json::array();
      for (int part = 0; part < recorded_parts(cta); ++part) {
        const kernels::TimelinePart& record = cta.part[part];
        parts.push_back({{"sequence", record.sequence},
                         {"steps", record.steps},
                         {"partial", record.part_slot >= 0},
                         {"end_us", micros_since(record.end_ns, origin)},
                         {"end_cycles", cycles_between(cta.start_clock, record.end_clock)}});
      }
      nlohmann::json record{{"cta", index},
                            {"sm", cta.sm},
                            {"start_us", micros_since(cta.start_ns, origin)},
                            {"parts_total", cta.parts},
                            {"parts", std::move(parts)}};
      if (cta.ring_stages > 0) {
        nlohmann::json tiles = nlohmann::json::array();
        for (int t = 0; t < recorded_tiles(cta); ++t) {
          nlohmann::json events = nlohmann::json::array();
          for (std::size_t e = 0; e < kTileEvents.size(); ++e) {
            if (e >= kFirstMmaEvent && !cta.mma_events) {
              events.push_back(nullptr);
              continue;
            }
            events.push_back(cycles_between(cta.start_clock, cta.tile[t].*kTileEvents[e]));
          }
          tiles.push_back(std::move(events));
        }
        const auto event_json = [&](std::uint32_t clock) -> nlohmann::json {
          if (const auto cycles = recorded_event(cta, clock)) return *cycles;
          return nullptr;
        };
        record["ring"] = {{"stages", cta.ring_stages},
                          {"tiles_total", cta.ring_tiles},
                          {"mma_events", cta.mma_events != 0},
                          {"work_known", event_json(cta.work_known_clock)},
                          {"q_issue", event_json(cta.q_issue_clock)},
                          {"q_issued", event_json(cta.q_issued_clock)},
                          {"merge",
                           {{"begin", event_json(cta.merge_begin_clock)},
                            {"stats_landed", event_json(cta.merge_stats_clock)},
                            {"shares_sent", event_json(cta.merge_sent_clock)},
                            {"rows_landed", event_json(cta.merge_rows_clock)},
                            {"staged", event_json(cta.merge_staged_clock)},
                            {"stored", event_json(cta.merge_stored_clock)}}},
                          {"tiles", std::move(tiles)}};
      }
      ctas.push_back(std::move(record));
    }
    const TimelineSummary summary = summarize_timeline(row.timeline);
    nlohmann::json by_parts = nlohmann::json::object();
    for (const auto& [parts, group] : summary.by_parts) {
      by_parts[std::to_string(parts)] = {{"ctas", group.ctas},
                                         {"mean_end_us", group.mean_end_us},
                                         {"max_end_us", group.max_end_us}};
    }
    out.push_back({{"variant", row.variant},
                   {"layout", row.layout},
                   {"heads", row.heads},
                   {"batch", row.batch},
                   {"context", row.context},
                   {"page_size", row.page_size},
                   {"splits", row.splits},
                   {"workers", row.workers},
                   {"us", row.us},
                   {"summary",
                    {{"ctas", summary.ctas},
                     {"last_start_us", summary.last_start_us},
                     {"min_end_us", summary.min_end_us},
                     {"median_end_us", summary.median_end_us},
                     {"max_end_us", summary.max_end_us},
                     {"clock_mhz",
                      {{"min", summary.min_clock_mhz},
                       {"median", summary.median_clock_mhz},
                       {"max", summary.max_clock_mhz}}},
                     {"by_parts", std::move(by_parts)}}},
                   {"ring_summary", ring_json(summarize_ring(row.timeline))},
                   {"ctas", std::move(ctas)}});
  }
  return out;
}

}  // namespace mlalab::bench
