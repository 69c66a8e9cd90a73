#include "bench/bench_runner.h"

#include <sched.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <sstream>
#include <vector>

#include "bench/check.h"
#include "kernels/registry.h"
#include "kernels/timeline.h"

namespace mlalab::bench {
namespace {

BenchRequest valid_request() {
  return BenchRequest{.layout = Layout::kV3, .num_heads = 16, .batches = {1, 3},
                      .contexts = {100}, .page_size = 64,
                      .variants = {kernels::compiled_variants().front().name}};
}

TEST(ValidateRequest, AcceptsAValidRequest) {
  EXPECT_FALSE(validate_request(valid_request()));
  BenchRequest all = valid_request();
  all.variants = {kAllVariants};
  EXPECT_FALSE(validate_request(all));
}

TEST(ValidateRequest, NamesTheFieldAndTheAllowedRange) {
  struct Case {
    void (*break_it)(BenchRequest&);
    const char* field;
    const char* allowed_part;
  };
  const Case cases[] = {
      {[](BenchRequest& r) { r.num_heads = 0; }, "num_heads", "[1, 128]"},
      {[](BenchRequest& r) { r.batches = {1, 0}; }, "batches[1]", "[1, 65536]"},
      {[](BenchRequest& r) { r.batches.clear(); }, "batches", "at least one"},
      {[](BenchRequest& r) { r.contexts = {kMaxContext + 1}; }, "contexts[0]", "[1, 1048576]"},
      {[](BenchRequest& r) { r.page_size = 48; }, "page_size", "power of two"},
      {[](BenchRequest& r) { r.page_size = 256; }, "page_size", "[1, 128]"},
      {[](BenchRequest& r) { r.timed_runs = kMinTimedRuns - 1; }, "timed_runs", "[20,"},
      {[](BenchRequest& r) { r.variants = {"h16_t16_w4_s9"}; }, "variants[0]", "'all' or"},
      {[](BenchRequest& r) {
         r.batches = {kMaxBatch};
         r.contexts = {kMaxContext};
       },
       "batch × context", "GiB of KV cache"},
  };
  for (const auto& test_case : cases) {
    BenchRequest request = valid_request();
    test_case.break_it(request);
    const auto error = validate_request(request);
    ASSERT_TRUE(error) << test_case.field;
    EXPECT_EQ(error->field, test_case.field);
    EXPECT_NE(error->allowed.find(test_case.allowed_part), std::string::npos)
        << error->message();
  }
}

// A timeline needs a build whose kernels record one; a normal build says how to get one
// instead of running untimed kernels.
TEST(ValidateRequest, ATimelineNeedsATimelineBuild) {
  BenchRequest request = valid_request();
  request.timeline = true;
  const auto error = validate_request(request);
  if (kernels::kTimelineBuild) {
    EXPECT_FALSE(error) << error->message();
  } else {
    ASSERT_TRUE(error);
    EXPECT_EQ(error->field, "timeline");
    EXPECT_NE(error->allowed.find("-DMLALAB_TIMELINE=ON"), std::string::npos) << error->message();
  }
}

TEST(ValidateRequest, UnknownVariantListsTheCompiledOnes) {
  BenchRequest request = valid_request();
  request.variants = {"nope"};
  const auto error = validate_request(request);
  ASSERT_TRUE(error);
  for (const auto& variant : kernels::compiled_variants()) {
    EXPECT_NE(error->allowed.find(variant.name), std::string::npos) << error->allowed;
  }
}

TEST(ValidationBatchIndices, AllForSmallBatchesElseSpreadIncludingEnds) {
  EXPECT_TRUE(validation_batch_indices(1).empty());
  EXPECT_TRUE(validation_batch_indices(kMaxCheckedEntries).empty());
  for (const int batch : {kMaxCheckedEntries + 1, 64, 1000}) {
    const auto indices = validation_batch_indices(batch);
    ASSERT_EQ(indices.size(), static_cast<std::size_t>(kMaxCheckedEntries));
    EXPECT_EQ(indices.front(), 0);
    EXPECT_EQ(indices.back(), batch - 1);
    for (std::size_t i = 1; i < indices.size(); ++i) EXPECT_LT(indices[i - 1], indices[i]);
  }
}

TEST(ReplicaCount, SpansFourL2sWithinTheCaps) {
  constexpr std::size_t kL2 = std::size_t{50} << 20;
  constexpr std::size_t kMiB = std::size_t{1} << 20;
  EXPECT_EQ(replica_count(10 * kMiB, kL2), 20);           // 200 MiB / 10 MiB
  EXPECT_EQ(replica_count(300 * kMiB, kL2), 2);           // never fewer than two
  EXPECT_EQ(replica_count(6 * (std::size_t{1} << 30), kL2), 2);  // two even past the cap
  EXPECT_EQ(replica_count(1024, kL2), kMaxReplicas);      // tiny problems: capped count
  EXPECT_GE(replica_count(7 * kMiB, kL2) * 7 * kMiB, 4 * kL2);
}

TEST(RowMetrics, CountsKvOnceAndQAndOut) {
  // v3: one sequence of 1000 tokens, 16 heads, in 1 µs.
  const RowMetrics metrics = row_metrics({1000}, 16, Layout::kV3, 1.0);
  const double bytes = 1000.0 * 576 * 2 + 16.0 * 576 * 2 + 16.0 * 512 * 2;
  EXPECT_NEAR(metrics.gbps, bytes / 1e9 / 1e-6, 1e-6);
  const double flops = 2.0 * 1000 * 16 * (576 + 512);
  EXPECT_NEAR(metrics.tflops, flops / 1e12 / 1e-6, 1e-9);
}

TEST(RunCpuBench, ValidatesAndTimesEveryShape) {
  BenchRequest request = valid_request();
  request.batches = {1, 2};
  request.contexts = {64, 130};
  request.cpu_threads = 2;
  std::ostringstream progress;
  const BenchReport report = run_cpu_bench(request, &progress);
  // Where this process may use fewer CPUs than the 2 threads (taskset), the header says so.
  cpu_set_t mask;
  CPU_ZERO(&mask);
  ASSERT_EQ(sched_getaffinity(0, sizeof(mask), &mask), 0);
  EXPECT_EQ(report.environment.gpu,
            CPU_COUNT(&mask) >= 2 ? "cpu (2 threads)" : "cpu (2 threads on 1 usable CPU)");
  EXPECT_FALSE(report.environment.read_gbps);
  ASSERT_EQ(report.rows.size(), 4u);
  for (const auto& row : report.rows) {
    EXPECT_EQ(row.status, RowStatus::kOk) << row.status_text();
    EXPECT_EQ(row.variant, kCpuVariantName);
    EXPECT_EQ(row.splits, 1);
    EXPECT_EQ(row.samples, kMinTimedRuns);
    EXPECT_GT(row.us, 0.0);
    EXPECT_GT(row.gbps, 0.0);
    EXPECT_GT(row.tflops, 0.0);
    EXPECT_FALSE(row.pct_read_bw);
  }
  EXPECT_EQ(report.rows[3].batch, 2);
  EXPECT_EQ(report.rows[3].context, 130);
  EXPECT_NE(progress.str().find("[4/4] cpu B=2 L=130"), std::string::npos) << progress.str();
  EXPECT_FALSE(report.any_failed());
}

// Drawn lengths on the CPU backend: every row checked and timed on its batch's draw, whose
// tokens it reports (the first sequences of a larger batch are a smaller one's), and the
// metrics count those tokens, not batch · context.
TEST(RunCpuBench, TimesDrawnLengths) {
  BenchRequest request = valid_request();
  request.batches = {3, 6};
  request.contexts = {200};
  request.lengths = {.shortest_fraction = 0.25};
  request.cpu_threads = 2;
  std::ostringstream progress;
  const BenchReport report = run_cpu_bench(request, &progress);
  EXPECT_EQ(report.lengths, "uniform:0.25");
  ASSERT_EQ(report.rows.size(), 2u);
  for (const BenchRow& row : report.rows) {
    EXPECT_EQ(row.status, RowStatus::kOk) << row.status_text();
    const std::vector<int> lengths = drawn_lengths(request.lengths, row.batch, 200, request.seed);
    EXPECT_EQ(row.tokens, std::accumulate(lengths.begin(), lengths.end(), 0LL));
    EXPECT_LT(row.tokens, 200LL * row.batch);
    EXPECT_GE(row.tokens, 50LL * row.batch);
    EXPECT_NEAR(row.gbps,
                row_metrics(lengths, row.heads, request.layout, row.us).gbps, 1e-9 * row.gbps);
  }
  EXPECT_NE(progress.str().find(fmt::format("[1/2] cpu B=3 L=200 ({} tokens drawn)",
                                            report.rows[0].tokens)),
            std::string::npos)
      << progress.str();
}

TEST(DrawnLengths, EqualLengthsAreAllTheContext) {
  EXPECT_EQ(drawn_lengths({}, 5, 4096, 1), (std::vector<int>(5, 4096)));
}

TEST(DrawnLengths, UniformLengthsSpanTheirRangeAndGrowByBatch) {
  const dispatch::TunedLengths mixed{.shortest_fraction = 0.125};
  const std::vector<int> lengths = drawn_lengths(mixed, 128, 8192, 7);
  ASSERT_EQ(lengths.size(), 128u);
  for (const int length : lengths) {
    EXPECT_GE(length, 1024);
    EXPECT_LE(length, 8192);
  }
  // Spread over the range, not bunched: both ends' quarters are drawn from.
  const auto [shortest, longest] = std::minmax_element(lengths.begin(), lengths.end());
  EXPECT_LT(*shortest, 1024 + 7168 / 4);
  EXPECT_GT(*longest, 8192 - 7168 / 4);
  // A smaller batch is the larger one's first sequences; the seed decides the draw.
  const std::vector<int> eight = drawn_lengths(mixed, 8, 8192, 7);
  EXPECT_TRUE(std::equal(eight.begin(), eight.end(), lengths.begin()));
  EXPECT_EQ(drawn_lengths(mixed, 128, 8192, 7), lengths);
  EXPECT_NE(drawn_lengths(mixed, 128, 8192, 8), lengths);
}

// The shortest length drawn over many sequences: the range's lower end, which they all reach.
int shortest_of(const dispatch::TunedLengths& lengths, int context) {
  const std::vector<int> drawn = drawn_lengths(lengths, 10000, context, 1);
  EXPECT_LE(*std::max_element(drawn.begin(), drawn.end()), context);
  return *std::min_element(drawn.begin(), drawn.end());
}

TEST(DrawnLengths, TheShortestIsTheFractionRoundedUpAndAtLeastOne) {
  EXPECT_EQ(shortest_of({.shortest_fraction = 0.5}, 15), 8);     // ⌈7.5⌉
  EXPECT_EQ(shortest_of({.shortest_fraction = 0.035}, 400), 14);  // 14.000000000000002 in doubles
  EXPECT_EQ(shortest_of({.shortest_fraction = 0.01}, 10), 1);     // ⌈0.1⌉
  EXPECT_EQ(shortest_of({.shortest_fraction = 1e-300}, 10), 1);
}

}  // namespace
}  // namespace mlalab::bench
