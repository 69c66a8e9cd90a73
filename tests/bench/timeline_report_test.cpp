#include "bench/timeline_report.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace mlalab::bench {
namespace {

using kernels::CtaTimeline;

// A CTA that started at `start_ns` and finished parts at `ends_ns` (sequence i, 3 steps each).
CtaTimeline cta(std::uint64_t start_ns, std::vector<std::uint64_t> ends_ns, unsigned sm = 0) {
  CtaTimeline record{};
  record.start_ns = start_ns;
  record.sm = sm;
  record.parts = static_cast<int>(ends_ns.size());
  for (int i = 0; i < record.parts && i < kernels::kTimelineParts; ++i) {
    record.part[i] = {
        .end_ns = ends_ns[i], .sequence = i, .steps = 3, .part_slot = i - 1, .end_clock = 0};
  }
  return record;
}

TEST(SummarizeTimeline, EndsAreTheLastPartsFromTheFirstStartGroupedByParts) {
  // Started at 1,000, 1,100 and 1,050 ns. Ends, from 1,000 ns: 8.0 µs (two parts), 6.1 µs
  // (one), 0.05 µs (none: its start) and 4.5 µs (one).
  const std::vector<CtaTimeline> records{cta(1000, {5000, 9000}), cta(1100, {7100}),
                                         cta(1050, {}), cta(1000, {5500})};
  const TimelineSummary summary = summarize_timeline(records);
  EXPECT_EQ(summary.ctas, 4);
  EXPECT_DOUBLE_EQ(summary.last_start_us, 0.1);
  EXPECT_DOUBLE_EQ(summary.min_end_us, 0.05);
  EXPECT_DOUBLE_EQ(summary.max_end_us, 8.0);
  EXPECT_DOUBLE_EQ(summary.median_end_us, (4.5 + 6.1) / 2);
  ASSERT_EQ(summary.by_parts.size(), 3u);
  EXPECT_EQ(summary.by_parts.at(0).ctas, 1);
  EXPECT_EQ(summary.by_parts.at(1).ctas, 2);
  EXPECT_DOUBLE_EQ(summary.by_parts.at(1).mean_end_us, (6.1 + 4.5) / 2);
  EXPECT_DOUBLE_EQ(summary.by_parts.at(1).max_end_us, 6.1);
  EXPECT_DOUBLE_EQ(summary.by_parts.at(2).mean_end_us, 8.0);
  EXPECT_EQ(summary.truncated_ctas, 0);
  EXPECT_EQ(summarize_timeline({}).ctas, 0);
}

TEST(SummarizeTimeline, TheSmClockIsEachCtasCyclesOverItsNanosecondsFromStartToLastPart) {
  // 1,500 MHz over 8 µs (its clock's low 32 bits wrapping in between), 1,750 over 4 µs to its
  // second part, and a CTA of 0.5 µs, too short for %globaltimer's steps: left out.
  CtaTimeline wrapping = cta(1000, {9000});
  wrapping.start_clock = 0xFFFF0000u;
  wrapping.part[0].end_clock = wrapping.start_clock + 12000u;
  CtaTimeline two_parts = cta(0, {2000, 4000});
  two_parts.start_clock = 500;
  two_parts.part[1].end_clock = 500 + 7000;
  CtaTimeline short_one = cta(0, {500});
  short_one.part[0].end_clock = 10;
  const TimelineSummary summary = summarize_timeline({wrapping, two_parts, short_one});
  EXPECT_DOUBLE_EQ(summary.min_clock_mhz, 1500.0);
  EXPECT_DOUBLE_EQ(summary.max_clock_mhz, 1750.0);
  EXPECT_DOUBLE_EQ(summary.median_clock_mhz, 1625.0);
  EXPECT_NE(timeline_summary_text(summary).find("SM clock 1,500 / 1,625 / 1,750 MHz"),
            std::string::npos)
      << timeline_summary_text(summary);
  EXPECT_EQ(timeline_summary_text(summarize_timeline({short_one})).find("SM clock"),
            std::string::npos);
}

TEST(SummarizeTimeline, ACtaOfMorePartsThanRecordedEndsAtItsLastRecordedPart) {
  std::vector<std::uint64_t> ends;
  for (int part = 1; part <= kernels::kTimelineParts + 3; ++part) ends.push_back(1000 * part);
  CtaTimeline busy = cta(0, ends);
  const TimelineSummary summary = summarize_timeline({busy});
  EXPECT_EQ(summary.truncated_ctas, 1);
  EXPECT_DOUBLE_EQ(summary.max_end_us, kernels::kTimelineParts * 1.0);
  EXPECT_EQ(summary.by_parts.begin()->first, kernels::kTimelineParts + 3);
  EXPECT_NE(timeline_summary_text(summary).find("more than 15 parts"), std::string::npos)
      << timeline_summary_text(summary);
}

TEST(TimelineJson, HoldsEachRowWithATimelineItsCtasInMicrosecondsAndItsSummary) {
  BenchRow with{.variant = "h16_t16_w4_s2", .heads = 16, .batch = 2, .context = 100};
  with.timeline = {cta(2000, {4000}, 7), cta(2500, {3000, 6500}, 3)};
  with.timeline[1].start_clock = 100;
  with.timeline[1].part[1].end_clock = 7100;
  const BenchRow without{.variant = "h16_t16_w4_s2", .batch = 4};
  const nlohmann::json json = timeline_json({with, without});
  ASSERT_EQ(json.size(), 1u);
  const nlohmann::json& row = json[0];
  EXPECT_EQ(row["batch"], 2);
  ASSERT_EQ(row["ctas"].size(), 2u);
  const nlohmann::json& second = row["ctas"][1];
  EXPECT_EQ(second["sm"], 3);
  EXPECT_DOUBLE_EQ(second["start_us"].get<double>(), 0.5);
  ASSERT_EQ(second["parts"].size(), 2u);
  EXPECT_DOUBLE_EQ(second["parts"][1]["end_us"].get<double>(), 4.5);
  EXPECT_DOUBLE_EQ(second["parts"][1]["end_cycles"].get<double>(), 7000.0);
  EXPECT_EQ(second["parts"][0]["partial"], false);  // slot −1: the final result
  EXPECT_EQ(second["parts"][1]["partial"], true);
  EXPECT_EQ(second["parts"][1]["sequence"], 1);
  EXPECT_DOUBLE_EQ(row["summary"]["max_end_us"].get<double>(), 4.5);
  EXPECT_EQ(row["summary"]["by_parts"]["2"]["ctas"], 1);
}

// A CTA of a two-stage ring whose clock wraps during the launch: tile t's events at
// 1,000·t cycles plus the offsets below; odd tiles' MMA warps ask before the copy is issued.
CtaTimeline ring_cta(bool mma_events) {
  CtaTimeline record = cta(0, {9000});
  record.start_clock = 0xFFFFFF00u;  // 256 cycles before the wrap
  record.ring_stages = 2;
  record.ring_tiles = 5;
  record.mma_events = mma_events;
  // Its prologue: work known 40 cycles in, q issued from 60 to 90, before the wrap.
  record.work_known_clock = record.start_clock + 40;
  record.q_issue_clock = record.start_clock + 60;
  record.q_issued_clock = record.start_clock + 90;
  // No pair merge (the kernel sets each of its events to the start first).
  record.merge_begin_clock = record.merge_stats_clock = record.merge_sent_clock =
      record.merge_rows_clock = record.merge_staged_clock = record.merge_stored_clock =
          record.start_clock;
  for (int t = 0; t < record.ring_tiles; ++t) {
    const std::uint32_t base = record.start_clock + 1000u * t;
    record.tile[t] = {.free_wait = base,
                      .first_free = base + 60,
                      .first_issued = base + 100,
                      .rest_free = base + 120,
                      .rest_issued = base + 150,
                      .landed_wait = base + (t % 2 == 1 ? 50u : 200u),
                      .first_landed = base + 500,
                      .rest_landed = base + 580,
                      .first_freed = base + 900,
                      .rest_freed = base + 950};
  }
  return record;
}

TEST(SummarizeRing, TilesThatReuseAStageFromTheirStagesLastTileAcrossTheClocksWrap) {
  const RingSummary summary = summarize_ring({ring_cta(true), cta(0, {5000})});
  EXPECT_EQ(summary.ctas, 1);  // the second has no ring
  EXPECT_EQ(summary.tiles, 3);  // tiles 2, 3, 4
  EXPECT_DOUBLE_EQ(summary.stage_wait.median, 100);
  EXPECT_EQ(summary.tile_period.tiles, 2);
  EXPECT_DOUBLE_EQ(summary.tile_period.median, 1000);
  // Asked at 200 (even tiles) or 50 (odd), landed at 500.
  EXPECT_DOUBLE_EQ(summary.mma_wait.median, 300);
  EXPECT_DOUBLE_EQ(summary.mma_wait.p10, 300);
  EXPECT_DOUBLE_EQ(summary.mma_wait.p90, 450);
  // Only where the MMA warps asked before the issue: tile 3, 500 − 100.
  EXPECT_EQ(summary.issue_to_landed.tiles, 1);
  EXPECT_DOUBLE_EQ(summary.issue_to_landed.median, 400);
  // Tile t − 2 freed its stage's first piece at 900: tile t issued 2,100 − 900 later and asked
  // for at 2,200 or 2,050.
  EXPECT_DOUBLE_EQ(summary.free_to_issue.median, 1200);
  EXPECT_DOUBLE_EQ(summary.free_to_seen.median, 1160);  // the issuer's wait returned at 60
  EXPECT_DOUBLE_EQ(summary.issue_time.median, 40);
  EXPECT_DOUBLE_EQ(summary.free_to_ask.median, 1300);
  EXPECT_DOUBLE_EQ(summary.free_to_ask.p10, 1150);
  EXPECT_DOUBLE_EQ(summary.rest_after_first.median, 80);
  EXPECT_DOUBLE_EQ(summary.mma_wait.mean, 350);  // 300, 450, 300
  // Tiles 2 and 4 use stage 0, tile 3 stage 1 (which alone has odd tiles' early asks).
  ASSERT_EQ(summary.by_stage.size(), 2u);
  EXPECT_EQ(summary.by_stage[0].mma_wait.tiles, 2);
  EXPECT_DOUBLE_EQ(summary.by_stage[0].mma_wait.mean, 300);
  EXPECT_DOUBLE_EQ(summary.by_stage[1].mma_wait.median, 450);
  EXPECT_EQ(summary.by_stage[0].tile_period.tiles, 1);  // tile 4 (tile 2 has no tile before)
  EXPECT_DOUBLE_EQ(summary.by_stage[1].tile_period.mean, 1000);
  const std::string text = ring_summary_text(summary);
  EXPECT_NE(text.find("by stage (tile t uses stage t mod 2): 0: a tile every 1,000 [1,000, "
                      "1,000], mean 1,000, the MMA warps waited 300 [300, 300], mean 300; 1:"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("3 tiles of 1 CTA that reuse"), std::string::npos) << text;
  EXPECT_NE(text.find("waited 300 [300, 450] for the piece S begins on"), std::string::npos)
      << text;
  EXPECT_NE(text.find("issued the piece 1,200 [1,200, 1,200] after"), std::string::npos) << text;
  EXPECT_NE(text.find("took 40 [40, 40] from the free"), std::string::npos) << text;
}

TEST(SummarizeRing, ThePrologueIsInCyclesFromEachCtasStartOverEveryCtaWithATile) {
  CtaTimeline q_by_cp_async = ring_cta(false);
  q_by_cp_async.ring_tiles = 1;  // a tile, none that reuses a stage
  q_by_cp_async.q_issue_clock = q_by_cp_async.q_issued_clock = q_by_cp_async.start_clock;
  q_by_cp_async.work_known_clock += 20;
  const RingSummary summary = summarize_ring({ring_cta(true), q_by_cp_async});
  EXPECT_EQ(summary.ctas, 1);
  EXPECT_EQ(summary.prologue.work_known.tiles, 2);
  EXPECT_DOUBLE_EQ(summary.prologue.work_known.mean, 50);
  EXPECT_EQ(summary.prologue.q_issued.tiles, 1);  // the other's q went by cp.async
  EXPECT_DOUBLE_EQ(summary.prologue.q_issued.median, 90);
  EXPECT_EQ(summary.prologue.first_issued.tiles, 2);
  EXPECT_DOUBLE_EQ(summary.prologue.first_issued.median, 100);
  EXPECT_EQ(summary.prologue.first_landed.tiles, 1);  // the other's MMA warps record none
  EXPECT_DOUBLE_EQ(summary.prologue.first_landed.median, 500);
  const std::string text = ring_summary_text(summary);
  EXPECT_NE(text.find("; the prologue, cycles from the CTA's start: work known 50 [40, 60], q "
                      "issued 90 [90, 90], the first tile's first piece issued 100 [100, 100], "
                      "landed 500 [500, 500]"),
            std::string::npos)
      << text;
  BenchRow row{.variant = "wgmma_h16_t64_w4_s2", .heads = 16, .batch = 1, .context = 64};
  row.timeline = {q_by_cp_async};
  const nlohmann::json ring = timeline_json({row})[0]["ctas"][0]["ring"];
  EXPECT_DOUBLE_EQ(ring["work_known"].get<double>(), 60);
  EXPECT_TRUE(ring["q_issue"].is_null());
  EXPECT_TRUE(ring["q_issued"].is_null());
}

TEST(SummarizeRing, APairMergesStepsAreInCyclesFromItsEntryOverTheCtasThatMerged) {
  // The two CTAs of a pair (thread 0 of each records every step): entered at 10,000 cycles
  // (after the clock's wrap), each step later, rank 1's statistics 500 cycles later than
  // rank 0's. A third CTA did not merge.
  CtaTimeline rank0 = ring_cta(true);
  CtaTimeline rank1 = ring_cta(true);
  for (CtaTimeline* record : {&rank0, &rank1}) {
    record->merge_begin_clock = record->start_clock + 10000;
    record->merge_stats_clock = record->merge_begin_clock + 1500;
    record->merge_sent_clock = record->merge_begin_clock + 4000;
    record->merge_rows_clock = record->merge_begin_clock + 4500;
    record->merge_staged_clock = record->merge_begin_clock + 5000;
    record->merge_stored_clock = record->merge_begin_clock + 6000;
  }
  rank1.merge_stats_clock += 500;
  const RingSummary summary = summarize_ring({rank0, rank1, ring_cta(true)});
  EXPECT_EQ(summary.merge.stats_landed.tiles, 2);
  EXPECT_DOUBLE_EQ(summary.merge.stats_landed.mean, 1750);
  EXPECT_DOUBLE_EQ(summary.merge.shares_sent.median, 4000);
  EXPECT_DOUBLE_EQ(summary.merge.rows_landed.median, 4500);
  EXPECT_EQ(summary.merge.stored.tiles, 2);
  EXPECT_DOUBLE_EQ(summary.merge.stored.median, 6000);
  const std::string text = ring_summary_text(summary);
  EXPECT_NE(text.find("; the pair merge, cycles from its entry: the other's statistics landed "
                      "1,750 [1,500, 2,000], this CTA's share sent 4,000 [4,000, 4,000], the "
                      "other's share landed 4,500 [4,500, 4,500], the rows staged 5,000 [5,000, "
                      "5,000], stored 6,000 [6,000, 6,000] (2 CTAs)"),
            std::string::npos)
      << text;
  EXPECT_EQ(ring_summary_text(summarize_ring({ring_cta(true)})).find("pair merge"),
            std::string::npos);
  // Where no tile reuses a stage (short parts), the merge's line stands alone.
  CtaTimeline short_part = rank0;
  short_part.ring_tiles = 2;
  EXPECT_EQ(ring_summary_text(summarize_ring({short_part})).rfind("the pair merge, cycles", 0),
            0u);
  BenchRow row{.variant = "wgmma_h64_t64_w8_s2", .heads = 128, .batch = 32, .context = 4096};
  row.timeline = {rank1, ring_cta(true)};
  const nlohmann::json ctas = timeline_json({row})[0]["ctas"];
  EXPECT_DOUBLE_EQ(ctas[0]["ring"]["merge"]["begin"].get<double>(), 10000);
  EXPECT_DOUBLE_EQ(ctas[0]["ring"]["merge"]["rows_landed"].get<double>(), 14500);
  EXPECT_TRUE(ctas[1]["ring"]["merge"]["begin"].is_null());  // it did not merge
}

TEST(SummarizeRing, AnSThatBeginsOnTheRestWaitedUntilTheRestLanded) {
  CtaTimeline record = ring_cta(true);
  for (int t = 0; t < record.ring_tiles; ++t) {
    std::swap(record.tile[t].first_landed, record.tile[t].rest_landed);  // rest at 500
    record.tile[t].first_landed += 200;                                  // first at 780
  }
  const RingSummary summary = summarize_ring({record});
  EXPECT_DOUBLE_EQ(summary.mma_wait.median, 300);  // asked at 200 (or 50), the rest at 500
  EXPECT_DOUBLE_EQ(summary.mma_wait.p90, 450);
}

TEST(SummarizeRing, AKernelWhoseMmaWarpsRecordNothingGetsTheCopiesFiguresAlone) {
  const RingSummary summary = summarize_ring({ring_cta(false)});
  EXPECT_EQ(summary.tiles, 3);
  EXPECT_DOUBLE_EQ(summary.stage_wait.median, 100);
  EXPECT_EQ(summary.mma_wait.tiles, 0);
  EXPECT_EQ(summary.free_to_issue.tiles, 0);
  EXPECT_TRUE(summary.by_stage.empty());
  EXPECT_NE(ring_summary_text(summary).find("the MMA warps record no events here"),
            std::string::npos);
  EXPECT_EQ(ring_summary_text(summarize_ring({cta(0, {5000})})), "");
}

TEST(TimelineJson, ListsEachRingTilesEventsInCyclesFromTheCtasStart) {
  BenchRow row{.variant = "wgmma_h64_t64_w8_s2", .heads = 128, .batch = 1, .context = 320};
  row.timeline = {ring_cta(true)};
  const nlohmann::json json = timeline_json({row});
  const nlohmann::json& ring = json[0]["ctas"][0]["ring"];
  EXPECT_EQ(ring["stages"], 2);
  EXPECT_EQ(ring["mma_events"], true);
  ASSERT_EQ(ring["tiles"].size(), 5u);
  const nlohmann::json& names = json[0]["ring_summary"]["tile_events"];
  ASSERT_EQ(names.size(), 10u);
  EXPECT_EQ(names[6], "first_landed");
  EXPECT_DOUBLE_EQ(ring["tiles"][3][6].get<double>(), 3500);  // across the wrap
  EXPECT_DOUBLE_EQ(json[0]["ring_summary"]["mma_wait"]["median"].get<double>(), 300);
  EXPECT_DOUBLE_EQ(json[0]["ring_summary"]["mma_wait"]["mean"].get<double>(), 350);
  EXPECT_DOUBLE_EQ(
      json[0]["ring_summary"]["by_stage"][1]["mma_wait"]["median"].get<double>(), 450);
  EXPECT_EQ(timeline_json({BenchRow{.variant = "h16_t16_w4_s2", .batch = 1,
                                    .timeline = {cta(0, {10})}}})[0]["ctas"][0].count("ring"),
            0u);
}

TEST(TimelineJson, WritesTheMmaWarpsEventsAsNullWhereTheKernelRecordsNone) {
  BenchRow row{.variant = "wgmma_h16_t64_w4_s2", .heads = 16, .batch = 1, .context = 320};
  row.timeline = {ring_cta(false)};
  const nlohmann::json tile = timeline_json({row})[0]["ctas"][0]["ring"]["tiles"][3];
  ASSERT_EQ(tile.size(), 10u);
  EXPECT_DOUBLE_EQ(tile[4].get<double>(), 3150);  // rest_issued, the copy issuer's last
  for (int event = 5; event < 10; ++event) EXPECT_TRUE(tile[event].is_null()) << event;
}

}  // namespace
}  // namespace mlalab::bench
