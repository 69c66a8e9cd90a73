#include "dispatch/tuning_table.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "core/atomic_file.h"
#include "kernels/device.h"
#include "kernels/registry.h"

namespace mlalab::dispatch {
namespace {

// ---------------------------------------------------------------------------------------------
// Buckets

TEST(BucketOf, AnExactBucketServesItself) {
  const std::vector<int> buckets{1, 8, 64};
  EXPECT_EQ(bucket_of(buckets, 1), 1);
  EXPECT_EQ(bucket_of(buckets, 8), 8);
  EXPECT_EQ(bucket_of(buckets, 64), 64);
}

TEST(BucketOf, BetweenBucketsTheNextLargerServes) {
  const std::vector<int> buckets{1, 8, 64};
  EXPECT_EQ(bucket_of(buckets, 2), 8);
  EXPECT_EQ(bucket_of(buckets, 7), 8);
  EXPECT_EQ(bucket_of(buckets, 9), 64);
}

TEST(BucketOf, BelowTheSmallestTheSmallestServes) {
  const std::vector<int> buckets{1024, 4096};
  EXPECT_EQ(bucket_of(buckets, 1), 1024);
  EXPECT_EQ(bucket_of(buckets, 0), 1024);
}

TEST(BucketOf, AboveTheLargestTheLargestServes) {
  const std::vector<int> buckets{1, 8, 64};
  EXPECT_EQ(bucket_of(buckets, 65), 64);
  EXPECT_EQ(bucket_of(buckets, 100000), 64);
  EXPECT_EQ(bucket_of(std::vector<int>{16}, 17), 16);
}

TEST(DefaultBuckets, PowersOfTwoForBatchesAndThreeContexts) {
  EXPECT_EQ(default_batch_buckets(), (std::vector<int>{1, 2, 4, 8, 16, 32, 64, 128}));
  EXPECT_EQ(default_context_buckets(), (std::vector<int>{1024, 4096, 16384}));
}

TEST(MergeBuckets, SortsAndDropsDuplicates) {
  const std::vector<int> defaults{1, 2, 4, 8};
  const std::vector<int> listed{100, 3, 8, 3};
  EXPECT_EQ(merge_buckets(defaults, listed), (std::vector<int>{1, 2, 3, 4, 8, 100}));
}

TEST(MergeBuckets, NothingListedGivesTheDefaults) {
  const std::vector<int> defaults{1024, 4096, 16384};
  EXPECT_EQ(merge_buckets(defaults, {}), defaults);
  EXPECT_EQ(merge_buckets({}, std::vector<int>{5000, 2000}), (std::vector<int>{2000, 5000}));
}

// ---------------------------------------------------------------------------------------------
// A realistic table: an H200 tuned for V3 with 16 heads at batches 1 and 8, contexts 1024 and
// 4096; three candidates raced at every key, one variant pruned.

constexpr const char* kSmallTiles = "h16_t16_w4_s2";
constexpr const char* kWideTiles = "h64_t32_w8_s2";
constexpr const char* kWgmma = "wgmma_h64_t64_w8_s2";

TableIdentity h200_identity() {
  return {.gpu = "NVIDIA H200",
          .sm_count = 132,
          .compute_capability = 90,
          .cuda_driver = "13.0",
          .cuda_runtime = "12.8",
          .layout = Layout::kV3,
          .num_heads = 16,
          .page_size = 64,
          .candidates = {{.variant = kSmallTiles, .code_hash = "5f1c0a"},
                         {.variant = kWideTiles, .code_hash = "9e04b7"},
                         {.variant = kWgmma, .code_hash = "c27d13"}}};
}

// The key's race: the winner with `splits`, the runner-up 4 % slower with twice the splits, the
// third, a balanced launch of 66 workers, dropped 11 % slower. Times grow with the key so that
// no two entries hold the same numbers; 8.25 + 0.5 · batch + context / 512 µs for the winner
// (10.75 at batch 1, context 1024).
TableEntry raced_entry(int batch, int context, int splits, const char* winner,
                       const char* runner_up, const char* third) {
  const double us = 8.25 + 0.5 * batch + context / 512.0;
  return {.batch = batch,
          .context = context,
          .variant = winner,
          .splits = splits,
          .ranking = {{.variant = winner,
                       .splits = splits,
                       .us = us,
                       .us_low = us - 0.125,
                       .us_high = us + 0.25,
                       .samples = 40,
                       .change_pct = std::nullopt,
                       .change_low_pct = 0.0,
                       .change_high_pct = 0.0,
                       .outcome = "winner"},
                      {.variant = runner_up,
                       .splits = 2 * splits,
                       .us = us * 1.04,
                       .us_low = us * 1.03,
                       .us_high = us * 1.05,
                       .samples = 40,
                       .change_pct = -3.85,
                       .change_low_pct = -4.5,
                       .change_high_pct = -3.25,
                       .outcome = "runner-up"},
                      {.variant = third,
                       .splits = 1,
                       .workers = 66,
                       .us = us * 1.11,
                       .us_low = us * 1.09,
                       .us_high = us * 1.13,
                       .samples = 12,
                       .change_pct = -9.9,
                       .change_low_pct = -11.5,
                       .change_high_pct = -8.0,
                       .outcome = "dropped after round 3: slower than the leader beyond its "
                                  "interval"}},
          .rounds = 10 + batch,
          .seconds = 1.5 + context / 4096.0,
          .decision = batch == 8 ? "kept: the incumbent, not beaten beyond the noise" : "new"};
}

// The entry with its winner a balanced launch of 66 workers per head block (one split).
TableEntry balanced_winner(TableEntry entry) {
  entry.splits = entry.ranking[0].splits = 1;
  entry.workers = entry.ranking[0].workers = 66;
  return entry;
}

TuningTable h200_table() {
  return {.identity = h200_identity(),
          .commit = "fef29cd",
          .created_utc = "2026-12-01T09:30:00Z",
          .batch_buckets = {1, 8},
          .context_buckets = {1024, 4096},
          .lengths = {.shortest_fraction = 0.125},
          .pruned = {{.variant = "h64_t64_w8_s4",
                      .reason = "needs 402,176 B of shared memory, limit 232,448 B (the GPU's "
                                "opt-in limit)"}},
          .entries = {raced_entry(1, 1024, 8, kSmallTiles, kWideTiles, kWgmma),
                      raced_entry(1, 4096, 16, kSmallTiles, kWgmma, kWideTiles),
                      raced_entry(8, 1024, 2, kWideTiles, kSmallTiles, kWgmma),
                      balanced_winner(raced_entry(8, 4096, 4, kWgmma, kWideTiles, kSmallTiles))}};
}

// ---------------------------------------------------------------------------------------------
// Finding an entry

TEST(TuningTableFind, ServesACallByItsBuckets) {
  const TuningTable table = h200_table();
  const TableEntry* entry = table.find(3, 2000);
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->batch, 8);
  EXPECT_EQ(entry->context, 4096);
  EXPECT_EQ(entry->variant, kWgmma);
  EXPECT_EQ(entry->splits, 1);
  EXPECT_EQ(entry->workers, 66);

  entry = table.find(1, 1);
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->batch, 1);
  EXPECT_EQ(entry->context, 1024);
  EXPECT_EQ(entry->splits, 8);
}

TEST(TuningTableFind, PastTheLargestBucketsTheLargestEntryServes) {
  const TuningTable table = h200_table();
  const TableEntry* entry = table.find(512, 100000);
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->batch, 8);
  EXPECT_EQ(entry->context, 4096);
}

TEST(TuningTableFind, AKeyNotTunedHasNoEntry) {
  TuningTable table = h200_table();
  std::erase_if(table.entries,
                [](const TableEntry& entry) { return entry.batch == 8 && entry.context == 1024; });
  EXPECT_EQ(table.find(5, 1000), nullptr);
  EXPECT_NE(table.find(5, 1025), nullptr);
  EXPECT_EQ(TuningTable{}.find(1, 1024), nullptr);
}

TEST(TuningTableFind, FindBucketWantsTheExactPair) {
  TuningTable table = h200_table();
  ASSERT_NE(table.find_bucket(8, 1024), nullptr);
  EXPECT_EQ(table.find_bucket(8, 1024)->variant, kWideTiles);
  EXPECT_EQ(table.find_bucket(5, 1024), nullptr);
  EXPECT_EQ(table.find_bucket(8, 1000), nullptr);
  // The mutable overload hands out the table's own entry (for re-tuning in place).
  table.find_bucket(8, 1024)->splits = 32;
  EXPECT_EQ(table.find(8, 1024)->splits, 32);
}

TEST(TuningTableFind, TheWinnerIsRankedFirst) {
  const TuningTable table = h200_table();
  const TableEntry& entry = *table.find_bucket(8, 4096);
  EXPECT_EQ(entry.winner().variant, kWgmma);
  ASSERT_NE(entry.runner_up(), nullptr);
  EXPECT_EQ(entry.runner_up()->outcome, "runner-up");
}

// ---------------------------------------------------------------------------------------------
// JSON

TEST(TuningTableJson, WritesTheDocumentedForm) {
  const nlohmann::json json = table_to_json(h200_table());
  EXPECT_EQ(json["format"], "mlalab-tuning-table");
  EXPECT_EQ(json["version"], kTableFormatVersion);
  EXPECT_EQ(json["identity"]["layout"], "v3");
  EXPECT_EQ(json["identity"]["candidates"][2]["variant"], kWgmma);
  EXPECT_EQ(json["identity"]["candidates"][2]["code_hash"], "c27d13");
  EXPECT_EQ(json["batch_buckets"].get<std::vector<int>>(), (std::vector<int>{1, 8}));
  EXPECT_EQ(json["lengths"], "uniform:0.125");
  EXPECT_EQ(json["pruned"][0]["variant"], "h64_t64_w8_s4");
  const nlohmann::json& entry = json["entries"][3];
  EXPECT_EQ(entry["batch"], 8);
  EXPECT_EQ(entry["context"], 4096);
  EXPECT_EQ(entry["variant"], kWgmma);
  EXPECT_EQ(entry["splits"], 1);
  EXPECT_EQ(entry["workers"], 66);
  EXPECT_TRUE(entry["ranking"][0]["change_pct"].is_null());
  EXPECT_EQ(entry["ranking"][1]["change_pct"], -3.85);
  EXPECT_EQ(entry["ranking"][1]["splits"], 8);
  EXPECT_EQ(entry["ranking"][1]["workers"], 0);
}

// Version 1 had no workers: its entries read as split launches.
TEST(TuningTableJson, AVersionOneTableReadsAsSplitLaunches) {
  nlohmann::json json = table_to_json(h200_table());
  json["version"] = 1;
  for (nlohmann::json& entry : json["entries"]) {
    entry.erase("workers");
    for (nlohmann::json& result : entry["ranking"]) result.erase("workers");
  }
  json["entries"][3]["splits"] = json["entries"][3]["ranking"][0]["splits"] = 4;
  const TuningTable table = table_from_json(json);
  for (const TableEntry& entry : table.entries) {
    EXPECT_EQ(entry.workers, 0);
    for (const CandidateResult& result : entry.ranking) EXPECT_EQ(result.workers, 0);
  }
  EXPECT_EQ(table.find_bucket(8, 4096)->splits, 4);
}

// Version 2 had no lengths: its tables were tuned on equal lengths.
TEST(TuningTableJson, AVersionTwoTableWasTunedOnEqualLengths) {
  nlohmann::json json = table_to_json(h200_table());
  json["version"] = 2;
  json.erase("lengths");
  const TuningTable table = table_from_json(json);
  EXPECT_TRUE(table.lengths.equal());
  EXPECT_EQ(table.entries, h200_table().entries);
}

TEST(TunedLengths, TextFormsAndTheirParse) {
  EXPECT_EQ(lengths_text(TunedLengths{}), "equal");
  EXPECT_EQ(lengths_text({.shortest_fraction = 0.125}), "uniform:0.125");
  EXPECT_EQ(parse_lengths("equal"), TunedLengths{});
  EXPECT_EQ(parse_lengths("uniform"), TunedLengths{.shortest_fraction = kDefaultShortestFraction});
  EXPECT_EQ(parse_lengths("uniform:0.5"), TunedLengths{.shortest_fraction = 0.5});
  EXPECT_EQ(parse_lengths("uniform:1"), TunedLengths{});  // the shortest is the context: equal
  for (const double fraction : {0.125, 0.3, 0.01, 1.0}) {
    const TunedLengths lengths{.shortest_fraction = fraction};
    EXPECT_EQ(parse_lengths(lengths_text(lengths)), lengths) << fraction;
  }
  for (const char* bad : {"", "Equal", "uniform:", "uniform:0", "uniform:-0.5", "uniform:1.5",
                          "uniform:nan", "uniform:inf", "uniform:0.5x", "lognormal",
                          "uniform0.5", "uniform: 0.5", "uniform:+0.5", "uniform:0x0.8p0",
                          "uniform:0,5", "uniform:1e-400"}) {
    EXPECT_EQ(parse_lengths(bad), std::nullopt) << bad;
  }
}

TEST(TunedSplit, WorkersMakeABalancedLaunch) {
  EXPECT_EQ(tuned_split(4, 0), (SplitPolicy{.kind = SplitPolicy::Kind::kFixed, .value = 4}));
  EXPECT_EQ(tuned_split(1, 66), (SplitPolicy{.kind = SplitPolicy::Kind::kBalanced, .value = 66}));
  EXPECT_EQ(config_text(kWgmma, 4, 0), "wgmma_h64_t64_w8_s2/4");
  EXPECT_EQ(config_text(kWgmma, 1, 66), "wgmma_h64_t64_w8_s2/balanced:66");
}

TEST(TuningTableJson, RoundTripKeepsEveryField) {
  const TuningTable table = h200_table();
  const TuningTable back = table_from_json(table_to_json(table));
  EXPECT_EQ(back.identity, table.identity);
  EXPECT_EQ(back.commit, "fef29cd");
  EXPECT_EQ(back.created_utc, "2026-12-01T09:30:00Z");
  EXPECT_EQ(back.batch_buckets, table.batch_buckets);
  EXPECT_EQ(back.context_buckets, table.context_buckets);
  EXPECT_EQ(back.pruned, table.pruned);
  ASSERT_EQ(back.entries.size(), 4u);
  for (std::size_t i = 0; i < table.entries.size(); ++i) {
    EXPECT_EQ(back.entries[i], table.entries[i]) << "entries[" << i << "]";
  }
  EXPECT_EQ(back, table);
}

TEST(TuningTableJson, RoundTripKeepsV4AndAnUnknownDevice) {
  TuningTable table = h200_table();
  table.identity.layout = Layout::kV4;
  table.identity.gpu = "";
  table.identity.sm_count = 0;
  table.identity.compute_capability = 0;
  table.identity.cuda_driver = "";
  table.pruned.clear();
  const TuningTable back = table_from_json(table_to_json(table));
  EXPECT_EQ(back.identity.layout, Layout::kV4);
  EXPECT_EQ(back, table);
}

// One field of a valid table's JSON made wrong, and the whole message that must name it.
struct Malformation {
  std::string name;
  std::function<void(nlohmann::json&)> mutate;
  std::string message;
};

void PrintTo(const Malformation& malformation, std::ostream* out) { *out << malformation.name; }

class TuningTableMalformed : public ::testing::TestWithParam<Malformation> {};

TEST_P(TuningTableMalformed, NamesTheFieldAndWhatWasExpected) {
  nlohmann::json json = table_to_json(h200_table());
  GetParam().mutate(json);
  try {
    table_from_json(json);
    FAIL() << "accepted: " << GetParam().name;
  } catch (const TableError& error) {
    EXPECT_EQ(std::string(error.what()), GetParam().message);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Fields, TuningTableMalformed,
    ::testing::Values(
        Malformation{"not_a_table", [](auto& json) { json = nlohmann::json::array(); },
                     "format: not an mlalab tuning table"},
        Malformation{"other_format", [](auto& json) { json["format"] = "mlalab-results"; },
                     "format: not an mlalab tuning table"},
        Malformation{"newer_version", [](auto& json) { json["version"] = 99; },
                     "version: 99 is newer than this build reads (3)"},
        Malformation{"version_not_integer", [](auto& json) { json["version"] = "1"; },
                     R"(version: expected an integer ≥ 1, got "1")"},
        Malformation{"lengths_missing", [](auto& json) { json.erase("lengths"); },
                     "lengths: missing (expected a string)"},
        Malformation{"lengths_unknown", [](auto& json) { json["lengths"] = "uniform:2"; },
                     R"(lengths: expected equal, uniform, or uniform:F with F in (0, 1], )"
                     R"(e.g. uniform:0.125, got "uniform:2")"},
        Malformation{"missing_entries", [](auto& json) { json.erase("entries"); },
                     "entries: missing (expected an array)"},
        Malformation{"missing_identity_gpu", [](auto& json) { json["identity"].erase("gpu"); },
                     "identity.gpu: missing (expected a string)"},
        Malformation{"layout_v5", [](auto& json) { json["identity"]["layout"] = "v5"; },
                     R"(identity.layout: expected "v3" or "v4", got "v5")"},
        Malformation{"heads_zero", [](auto& json) { json["identity"]["num_heads"] = 0; },
                     "identity.num_heads: expected an integer in [1, 128], got 0"},
        Malformation{"page_size_not_power_of_two",
                     [](auto& json) { json["identity"]["page_size"] = 48; },
                     "identity.page_size: expected a power of two in [1, 128], got 48"},
        Malformation{"page_size_too_large",
                     [](auto& json) { json["identity"]["page_size"] = 256; },
                     "identity.page_size: expected a power of two in [1, 128], got 256"},
        Malformation{"candidate_not_a_variant",
                     [](auto& json) { json["identity"]["candidates"][1]["variant"] = "fast"; },
                     "identity.candidates[1].variant: expected a variant name such as "
                     R"(h16_t16_w4_s2, got "fast")"},
        Malformation{"buckets_not_ascending",
                     [](auto& json) { json["batch_buckets"] = {8, 1}; },
                     "batch_buckets[1]: expected an integer > 8, the bucket before it (buckets "
                     "ascend, each once), got 1"},
        Malformation{"buckets_repeated",
                     [](auto& json) { json["context_buckets"] = {1024, 1024, 4096}; },
                     "context_buckets[1]: expected an integer > 1024, the bucket before it "
                     "(buckets ascend, each once), got 1024"},
        Malformation{"buckets_empty",
                     [](auto& json) { json["context_buckets"] = nlohmann::json::array(); },
                     "context_buckets: expected a non-empty array, got []"},
        Malformation{"bucket_zero", [](auto& json) { json["batch_buckets"] = {0, 8}; },
                     "batch_buckets[0]: expected an integer in [1, 65536], got 0"},
        Malformation{"entry_batch_not_a_bucket",
                     [](auto& json) { json["entries"][0]["batch"] = 2; },
                     "entries[0].batch: expected one of batch_buckets (1, 8), got 2"},
        Malformation{"entry_context_not_a_bucket",
                     [](auto& json) { json["entries"][1]["context"] = 2048; },
                     "entries[1].context: expected one of context_buckets (1024, 4096), got 2048"},
        Malformation{"entry_twice",
                     [](auto& json) { json["entries"][3]["context"] = 1024; },
                     "entries[3]: a second entry for batch 8, context 1024 (entries[2] is the "
                     "first)"},
        Malformation{"splits_zero", [](auto& json) { json["entries"][3]["splits"] = 0; },
                     "entries[3].splits: expected an integer in [1, 256], got 0"},
        Malformation{"splits_fractional", [](auto& json) { json["entries"][3]["splits"] = 4.5; },
                     "entries[3].splits: expected an integer in [1, 256], got 4.5"},
        Malformation{"workers_missing", [](auto& json) { json["entries"][1].erase("workers"); },
                     "entries[1].workers: missing (expected an integer in [0, 1024])"},
        Malformation{"workers_too_many",
                     [](auto& json) { json["entries"][0]["ranking"][2]["workers"] = 5000; },
                     "entries[0].ranking[2].workers: expected an integer in [0, 1024], got 5000"},
        Malformation{"workers_with_splits",
                     [](auto& json) { json["entries"][0]["ranking"][2]["splits"] = 3; },
                     "entries[0].ranking[2].workers: expected 0 (a balanced launch has 1 "
                     "split; splits is 3), got 66"},
        Malformation{"winner_workers_differ",
                     [](auto& json) { json["entries"][3]["ranking"][0]["workers"] = 60; },
                     "entries[3].ranking[0].workers: expected 66, the entry's workers (the "
                     "winner is ranked first), got 60"},
        Malformation{"variant_not_a_candidate",
                     [](auto& json) { json["entries"][0]["variant"] = "h16_t32_w4_s2"; },
                     "entries[0].variant: expected one of identity.candidates (h16_t16_w4_s2, "
                     R"(h64_t32_w8_s2, wgmma_h64_t64_w8_s2), got "h16_t32_w4_s2")"},
        Malformation{"ranking_empty",
                     [](auto& json) { json["entries"][1]["ranking"] = nlohmann::json::array(); },
                     "entries[1].ranking: expected a non-empty array, got []"},
        Malformation{"winner_variant_differs",
                     [](auto& json) { json["entries"][2]["variant"] = kSmallTiles; },
                     R"(entries[2].ranking[0].variant: expected "h16_t16_w4_s2", the entry's )"
                     R"(variant (the winner is ranked first), got "h64_t32_w8_s2")"},
        Malformation{"winner_splits_differ",
                     [](auto& json) { json["entries"][2]["ranking"][0]["splits"] = 4; },
                     "entries[2].ranking[0].splits: expected 2, the entry's splits (the winner "
                     "is ranked first), got 4"},
        Malformation{"winner_compared_with_itself",
                     [](auto& json) { json["entries"][0]["ranking"][0]["change_pct"] = 0.0; },
                     "entries[0].ranking[0].change_pct: expected null (the winner is not "
                     "compared with itself), got 0.0"},
        Malformation{"time_zero", [](auto& json) { json["entries"][1]["ranking"][2]["us"] = 0; },
                     "entries[1].ranking[2].us: expected a number > 0, got 0"},
        Malformation{"interval_above_time",
                     [](auto& json) { json["entries"][0]["ranking"][0]["us_low"] = 100.0; },
                     "entries[0].ranking[0].us_low: expected a number ≤ us (10.75), got 100.0"},
        Malformation{"interval_below_time",
                     [](auto& json) { json["entries"][0]["ranking"][0]["us_high"] = 1.0; },
                     "entries[0].ranking[0].us_high: expected a number ≥ us (10.75), got 1.0"},
        Malformation{"ranked_variant_not_a_candidate",
                     [](auto& json) { json["entries"][0]["ranking"][2]["variant"] = "h8"; },
                     "entries[0].ranking[2].variant: expected one of identity.candidates "
                     R"((h16_t16_w4_s2, h64_t32_w8_s2, wgmma_h64_t64_w8_s2), got "h8")"},
        Malformation{"entry_not_an_object", [](auto& json) { json["entries"][2] = 7; },
                     "entries[2]: expected an object, got 7"}),
    [](const ::testing::TestParamInfo<Malformation>& info) { return info.param.name; });

// ---------------------------------------------------------------------------------------------
// Files

// A path of this test's own in the temporary folder (ctest runs tests in parallel processes).
std::filesystem::path temporary_path(const std::string& suffix) {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  return std::filesystem::temp_directory_path() /
         (std::string("mlalab_") + test->test_suite_name() + "_" + test->name() + suffix);
}

std::string file_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string error_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const TableError& error) {
    return error.what();
  }
  return "(no TableError)";
}

TEST(TuningTableFile, WriteThenReadGivesTheTableBack) {
  const auto path = temporary_path(".json");
  TuningTable table = h200_table();
  write_table(table, path.string());
  EXPECT_EQ(read_table(path.string()), table);
  // Written again over the old file: the rename replaces it.
  table.commit = "0123abc";
  table.entries.pop_back();
  write_table(table, path.string());
  EXPECT_EQ(read_table(path.string()), table);
  EXPECT_FALSE(std::filesystem::exists(atomic_temporary_of(path)));
  std::filesystem::remove(path);
}

TEST(TuningTableFile, IsIndentedWithTheFormatFirst) {
  const auto path = temporary_path(".json");
  write_table(h200_table(), path.string());
  const std::string text = file_text(path);
  const std::string opening = "{\n  \"format\": \"mlalab-tuning-table\",\n  \"version\": 3,\n";
  EXPECT_EQ(text.substr(0, opening.size()), opening);
  EXPECT_NE(text.find("\n      \"batch\": 1,\n      \"context\": 1024,\n      \"variant\": "
                      "\"h16_t16_w4_s2\",\n      \"splits\": 8,\n"),
            std::string::npos);
  std::filesystem::remove(path);
}

TEST(TuningTableFile, AnInvalidTableIsNotWritten) {
  const auto path = temporary_path(".json");
  TuningTable table = h200_table();
  table.entries[1].splits = 0;
  EXPECT_EQ(error_of([&] { write_table(table, path.string()); }),
            path.string() + " not written: entries[1].splits: expected an integer in [1, 256], "
                            "got 0");
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(std::filesystem::exists(atomic_temporary_of(path)));
}

TEST(TuningTableFile, AnUnwritableFolderIsNamedWithTheReason) {
  const auto path = temporary_path("_no_such_folder") / "table.json";
  EXPECT_EQ(error_of([&] { write_table(h200_table(), path.string()); }),
            "writing " + path.string() + ": cannot open " + atomic_temporary_of(path).string() +
                " for writing: No such file or directory");
}

TEST(TuningTableFile, AMissingFileCannotBeRead) {
  const auto path = temporary_path("_missing.json");
  EXPECT_EQ(error_of([&] { read_table(path.string()); }),
            "cannot read " + path.string() + ": No such file or directory");
}

TEST(TuningTableFile, AFileThatIsNotJsonSaysSo) {
  const auto path = temporary_path(".json");
  std::ofstream(path) << "{\"format\": \"mlalab-tuning-table\", version: 1}";
  const std::string error = error_of([&] { read_table(path.string()); });
  const std::string prefix = path.string() + " is not JSON: ";
  EXPECT_EQ(error.substr(0, prefix.size()), prefix) << error;
  EXPECT_NE(error.find("parse error at line 1"), std::string::npos) << error;
  std::filesystem::remove(path);
}

TEST(TuningTableFile, ABadFieldIsNamedAfterThePath) {
  const auto path = temporary_path(".json");
  nlohmann::json json = table_to_json(h200_table());
  json["identity"]["layout"] = "v5";
  std::ofstream(path) << json.dump(2);
  EXPECT_EQ(error_of([&] { read_table(path.string()); }),
            path.string() + R"(: identity.layout: expected "v3" or "v4", got "v5")");
  std::filesystem::remove(path);
}

// ---------------------------------------------------------------------------------------------
// Identity

TEST(IdentityMismatch, TheSameIdentityMatches) {
  EXPECT_EQ(identity_mismatch(h200_identity(), h200_identity()), std::nullopt);
}

TEST(IdentityMismatch, SaysBothGpusInWords) {
  TableIdentity table = h200_identity();
  table.gpu = "NVIDIA H100 80GB HBM3";
  EXPECT_EQ(identity_mismatch(table, h200_identity()),
            "gpu: the table was tuned on 'NVIDIA H100 80GB HBM3', this is 'NVIDIA H200'");
  TableIdentity without_gpu = h200_identity();
  without_gpu.gpu = "";
  EXPECT_EQ(identity_mismatch(h200_identity(), without_gpu),
            "gpu: the table was tuned on 'NVIDIA H200', this is a machine without a GPU");
}

TEST(IdentityMismatch, NamesEachFieldThatDiffers) {
  const std::vector<std::pair<std::string, std::function<void(TableIdentity&)>>> changes{
      {"gpu", [](TableIdentity& id) { id.gpu = "NVIDIA H100 80GB HBM3"; }},
      {"sm_count", [](TableIdentity& id) { id.sm_count = 114; }},
      {"compute_capability", [](TableIdentity& id) { id.compute_capability = 100; }},
      {"cuda_driver", [](TableIdentity& id) { id.cuda_driver = "12.8"; }},
      {"cuda_runtime", [](TableIdentity& id) { id.cuda_runtime = "13.0"; }},
      {"layout", [](TableIdentity& id) { id.layout = Layout::kV4; }},
      {"num_heads", [](TableIdentity& id) { id.num_heads = 64; }},
      {"page_size", [](TableIdentity& id) { id.page_size = 32; }},
      {"candidates", [](TableIdentity& id) { id.candidates[1].code_hash = "9e04b8"; }}};
  for (const auto& [field, change] : changes) {
    TableIdentity here = h200_identity();
    change(here);
    const auto mismatch = identity_mismatch(h200_identity(), here);
    ASSERT_TRUE(mismatch.has_value()) << field;
    EXPECT_EQ(mismatch->substr(0, field.size() + 2), field + ": ") << *mismatch;
  }
}

TEST(IdentityMismatch, SaysBothValuesOfEachField) {
  TableIdentity here = h200_identity();
  here.sm_count = 114;
  EXPECT_EQ(identity_mismatch(h200_identity(), here),
            "sm_count: the table was tuned on a GPU with 132 SMs, this one has 114");
  here = h200_identity();
  here.compute_capability = 100;
  EXPECT_EQ(identity_mismatch(h200_identity(), here),
            "compute_capability: the table was tuned on sm_90, this GPU is sm_100");
  here = h200_identity();
  here.cuda_driver = "12.8";
  EXPECT_EQ(identity_mismatch(h200_identity(), here),
            "cuda_driver: the table was tuned with a driver for CUDA 13.0, this one is for CUDA "
            "12.8");
  here = h200_identity();
  here.cuda_runtime = "13.0";
  EXPECT_EQ(identity_mismatch(h200_identity(), here),
            "cuda_runtime: the table was tuned with the runtime of CUDA 12.8, this build links "
            "CUDA 13.0");
  here = h200_identity();
  here.layout = Layout::kV4;
  EXPECT_EQ(identity_mismatch(h200_identity(), here),
            "layout: the table was tuned for v3, this problem is v4");
}

TEST(IdentityMismatch, TheFirstFieldInOrderIsNamed) {
  TableIdentity here = h200_identity();
  here.page_size = 32;
  here.sm_count = 114;
  here.candidates.clear();
  const auto mismatch = identity_mismatch(h200_identity(), here);
  ASSERT_TRUE(mismatch.has_value());
  EXPECT_EQ(mismatch->substr(0, 10), "sm_count: ");
}

TEST(IdentityMismatch, ACandidateNotCompiledHere) {
  TableIdentity here = h200_identity();
  here.candidates.pop_back();
  EXPECT_EQ(identity_mismatch(h200_identity(), here),
            "candidates: wgmma_h64_t64_w8_s2 is not compiled in this build");
  // identity_here's mark of a name that is not compiled: an empty hash.
  here = h200_identity();
  here.candidates[0].code_hash = "";
  EXPECT_EQ(identity_mismatch(h200_identity(), here),
            "candidates: h16_t16_w4_s2 is not compiled in this build");
}

TEST(IdentityMismatch, ACandidateWhoseCodeChanged) {
  TableIdentity here = h200_identity();
  here.candidates[0].code_hash = "5f1c0b";
  EXPECT_EQ(identity_mismatch(h200_identity(), here),
            "candidates: h16_t16_w4_s2's compiled code differs from the table's (a rebuild with "
            "changed kernel code); re-tune");
}

// A table tuned before code hashes left the kernels' names out recorded the hash with names
// (kernels::VariantCodeHashes): it matches while that form is this build's, and only then.
TEST(IdentityMismatch, ATableRecordingTheHashWithNamesMatchesThatFormOnly) {
  TableIdentity older = h200_identity();
  older.candidates[0].code_hash = "a1b2c3";
  TableIdentity here = h200_identity();
  here.candidates[0].code_hash_with_names = "a1b2c3";
  EXPECT_EQ(identity_mismatch(older, here), std::nullopt);
  EXPECT_EQ(check_candidate_code(older, here), CandidateCodeCheck{});
  here.candidates[0].code_hash_with_names = "a1b2c4";  // renamed, or other code
  EXPECT_EQ(check_candidate_code(older, here), CandidateCodeCheck{.changed = {kSmallTiles}});
}

TEST(IdentityMismatch, OnlyTheTablesCandidatesMatterInAnyOrder) {
  TableIdentity here = h200_identity();
  std::swap(here.candidates.front(), here.candidates.back());
  here.candidates.push_back({.variant = "h16_t32_w4_s2", .code_hash = "77aa01"});
  EXPECT_EQ(identity_mismatch(h200_identity(), here), std::nullopt);
}

TEST(CheckCandidateCode, ListsEveryCandidateWhoseCodeThisBuildLacks) {
  EXPECT_EQ(check_candidate_code(h200_identity(), h200_identity()), CandidateCodeCheck{});
  TableIdentity here = h200_identity();
  here.candidates[0].code_hash = "5f1c0b";
  here.candidates[1].code_hash = "";  // identity_here's mark of a variant not compiled
  here.candidates[2].code_hash = "c27d14";
  EXPECT_EQ(check_candidate_code(h200_identity(), here),
            (CandidateCodeCheck{.changed = {kSmallTiles, kWgmma}, .not_compiled = {kWideTiles}}));
  // Only the candidates' code counts: no GPU here, another GPU, is for the table's user.
  here = h200_identity();
  here.gpu = "";
  here.candidates.pop_back();
  EXPECT_EQ(check_candidate_code(h200_identity(), here),
            CandidateCodeCheck{.not_compiled = {kWgmma}});
}

TEST(IdentityHere, DescribesThisProcessAndTheProblem) {
  ASSERT_FALSE(kernels::compiled_variants().empty());
  const kernels::Variant& compiled = kernels::compiled_variants().front();
  const std::string not_compiled = "h8_t8_w1_s1";
  ASSERT_EQ(kernels::find_variant(not_compiled), nullptr);
  const std::vector<std::string> names{compiled.name, not_compiled};

  const TableIdentity here = identity_here(Layout::kV4, 64, 32, names);
  const kernels::CurrentDevice& device = kernels::current_device();
  EXPECT_EQ(here.gpu, device.present ? device.name : "");
  EXPECT_EQ(here.sm_count, device.present ? device.sm_count : 0);
  EXPECT_EQ(here.compute_capability, device.compute_capability);
  EXPECT_EQ(here.cuda_driver,
            device.present ? kernels::cuda_version_text(device.cuda_driver_version) : "");
  EXPECT_EQ(here.cuda_runtime,
            device.present ? kernels::cuda_version_text(device.cuda_runtime_version) : "");
  EXPECT_EQ(here.layout, Layout::kV4);
  EXPECT_EQ(here.num_heads, 64);
  EXPECT_EQ(here.page_size, 32);
  ASSERT_EQ(here.candidates.size(), 2u);
  EXPECT_EQ(here.candidates[0], (CandidateCode{compiled.name, compiled.code_hash,
                                               compiled.code_hash_with_names}));
  EXPECT_FALSE(here.candidates[0].code_hash.empty());
  EXPECT_NE(here.candidates[0].code_hash, here.candidates[0].code_hash_with_names);
  EXPECT_EQ(here.candidates[1], (CandidateCode{not_compiled, ""}));
}

TEST(IdentityHere, ATableTunedHereMatchesUnlessACandidateIsMissing) {
  const std::string compiled = kernels::compiled_variants().front().name;
  const std::vector<std::string> names{compiled};
  const TableIdentity tuned = identity_here(Layout::kV3, 16, 64, names);
  EXPECT_EQ(identity_mismatch(tuned, identity_here(Layout::kV3, 16, 64, names)), std::nullopt);

  TableIdentity from_elsewhere = tuned;
  from_elsewhere.candidates.push_back({.variant = "h8_t8_w1_s1", .code_hash = "41d0e2"});
  const std::vector<std::string> table_names{compiled, "h8_t8_w1_s1"};
  EXPECT_EQ(identity_mismatch(from_elsewhere, identity_here(Layout::kV3, 16, 64, table_names)),
            "candidates: h8_t8_w1_s1 is not compiled in this build");
}

}  // namespace
}  // namespace mlalab::dispatch
