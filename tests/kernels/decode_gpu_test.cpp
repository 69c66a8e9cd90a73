// The GPU correctness sweep: every compiled variant of both families that can run on this GPU,
// in both layouts, against the fp64 reference over a covering set of cases. Every value of
// every axis (batch, sequence length, page size, heads, split policy, sinks, page order)
// appears for every variant, plus a few heavy combinations; the full product would take hours.
//
// The reference is the slow part, so each case's problem is built, solved by the reference and
// uploaded once per layout, then shared by all variants. Outputs are poisoned before every
// launch, so a row a kernel forgets to write fails the check.
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <regex>
#include <optional>
#include <string>
#include <vector>

#include "bench/check.h"
#include "bench/cuda_raii.h"
#include "bench/problem.h"
#include "bench/require_gpu.h"
#include "core/bf16.h"
#include "core/validate.h"
#include "kernels/device.h"
#include "kernels/reference/reference.h"
#include "kernels/registry.h"
#include "kernels/split_plan.h"

namespace mlalab {
namespace {

using bench::CudaError;
using bench::DeviceBuffer;
using bench::HostProblem;
using bench::ProblemSpec;

// Failures reported in full per variant and layout; the rest are counted in the summary, so a
// broken kernel does not bury the log under thousands of identical messages.
constexpr int kMaxReportedFailures = 5;

SplitPolicy fixed(int splits) { return {.kind = SplitPolicy::Kind::kFixed, .value = splits}; }
SplitPolicy target_ctas(int ctas) {
  return {.kind = SplitPolicy::Kind::kTargetCtas, .value = ctas};
}
const SplitPolicy kHeuristic{};
SplitPolicy balanced(int workers) {
  return {.kind = SplitPolicy::Kind::kBalanced, .value = workers};
}
// Balanced launches: one wave of workers; a few (sequences in few parts, shares spanning
// many sequences); very many (sequences in many parts, fewer tokens than workers).
const std::vector<SplitPolicy> kBalanced = {balanced(0), balanced(5), balanced(1000)};

// A problem and the split policies it is launched with.
struct CaseSpec {
  std::string name{};
  ProblemSpec problem{};
  std::vector<SplitPolicy> splits{};
};

// The covering set. Lengths: 0 (empty), 1, 15 (inside one page), 64 (exactly one page of 64),
// 65 (one past), 1000, 4097 (many pages, a partial last one), mixed batches and one long
// sequence among short ones; page sizes 1 and 64, plus 16 and 128 (the ends of the allowed
// range). Every split policy, balanced ones included. The reference costs
// batch · heads · tokens, so the cases with many heads and long sequences are few.
std::vector<CaseSpec> sweep_cases() {
  const auto with_balanced = [](std::vector<SplitPolicy> splits) {
    splits.insert(splits.end(), kBalanced.begin(), kBalanced.end());
    return splits;
  };
  const std::vector<SplitPolicy> every_split = with_balanced(
      {fixed(1), fixed(2), fixed(7), fixed(64), kHeuristic, target_ctas(512)});
  const std::vector<int> every_length = {0, 1, 15, 64, 65, 1000, 4097};
  const int all_lengths = static_cast<int>(every_length.size());
  std::vector<CaseSpec> cases;
  const auto add = [&](std::string name, ProblemSpec problem, std::vector<SplitPolicy> splits) {
    cases.push_back(
        {.name = std::move(name), .problem = std::move(problem), .splits = std::move(splits)});
  };
  add("one_token_b1_h1_p1",
      {.batch = 1, .num_heads = 1, .seq_lens = {1}, .page_size = 1, .with_sinks = true},
      every_split);
  add("all_lengths_h16_p64",
      {.batch = all_lengths, .num_heads = 16, .seq_lens = every_length, .page_size = 64,
       .with_sinks = true},
      every_split);
  add("all_lengths_h17_p1",
      {.batch = all_lengths, .num_heads = 17, .seq_lens = every_length, .page_size = 1},
      every_split);
  add("b3_h64_p64", {.batch = 3, .num_heads = 64, .seq_lens = {65, 0, 1000}, .page_size = 64},
      every_split);
  // Pages exactly one 32-token tile long: the wgmma family's t32 tiles each one TMA box of a
  // page, its t64 tiles by cp.async across two pages.
  add("b3_h64_p32", {.batch = 3, .num_heads = 64, .seq_lens = {32, 97, 1000}, .page_size = 32},
      every_split);
  add("b3_h128_long_p64",
      {.batch = 3, .num_heads = 128, .seq_lens = {4097, 1, 1000}, .page_size = 64,
       .with_sinks = true},
      every_split);
  add("b1_h17_4097_pages_in_order",
      {.batch = 1, .num_heads = 17, .seq_lens = {4097}, .page_size = 64, .permute_pages = false},
      every_split);
  add("b1_h128_4097_p1",
      {.batch = 1, .num_heads = 128, .seq_lens = {4097}, .page_size = 1, .with_sinks = true},
      every_split);
  add("mixed_b97_h1_p64",
      {.batch = 97, .num_heads = 1, .seq_lens = bench::mixed_lengths(97, 4097, 14),
       .page_size = 64},
      every_split);
  // The other ends of the page-size range, around their page boundaries.
  add("b3_h16_p128", {.batch = 3, .num_heads = 16, .seq_lens = {4097, 129, 127}, .page_size = 128},
      every_split);
  add("b3_h17_p16",
      {.batch = 3, .num_heads = 17, .seq_lens = {15, 16, 17}, .page_size = 16, .with_sinks = true},
      every_split);
  add("mixed_b64_h16_p64",
      {.batch = 64, .num_heads = 16, .seq_lens = bench::mixed_lengths(64, 1000, 11),
       .page_size = 64, .with_sinks = true},
      with_balanced({fixed(1), fixed(7), kHeuristic, target_ctas(512)}));
  add("mixed_b97_h17_p1",
      {.batch = 97, .num_heads = 17, .seq_lens = bench::mixed_lengths(97, 1000, 12),
       .page_size = 1},
      with_balanced({fixed(1), fixed(2), kHeuristic, target_ctas(512)}));
  add("b97_h128_len64_p64",
      {.batch = 97, .num_heads = 128, .seq_lens = bench::uniform_lengths(97, 64),
       .page_size = 64, .with_sinks = true},
      with_balanced({fixed(1), fixed(2), kHeuristic}));
  add("mixed_b64_h64_4097_p1",
      {.batch = 64, .num_heads = 64, .seq_lens = bench::mixed_lengths(64, 4097, 13),
       .page_size = 1, .with_sinks = true},
      with_balanced({fixed(64), kHeuristic, target_ctas(512)}));
  add("heavy_b64_h128_4097_p64",
      {.batch = 64, .num_heads = 128, .seq_lens = bench::uniform_lengths(64, 4097),
       .page_size = 64, .with_sinks = true},
      with_balanced({fixed(1), kHeuristic}));
  // Serving's mixed batches under a balanced grid: one long sequence among short and empty
  // ones (its parts span many workers, theirs share one), page-boundary lengths, and a batch
  // without tokens.
  add("one_long_among_short_b9_h16_p64",
      {.batch = 9, .num_heads = 16, .seq_lens = {1, 0, 64, 65, 20000, 1, 128, 127, 3},
       .page_size = 64, .with_sinks = true},
      every_split);
  add("one_long_among_short_b9_h128_p64",
      {.batch = 9, .num_heads = 128, .seq_lens = {3, 127, 128, 1, 20000, 65, 64, 0, 1},
       .page_size = 64},
      with_balanced({kHeuristic}));
  // Rows enough (24 × 128 ≥ 2 × 8 × SMs up to 192 SMs) for the balanced launches'
  // warp-per-row combine, with empty sequences and one whose parts outnumber a warp's lanes.
  add("one_long_among_many_b24_h128_p64",
      {.batch = 24, .num_heads = 128,
       .seq_lens = {20000, 0, 1, 64, 65, 127, 128, 3, 0, 15, 1000, 64, 1, 2, 63, 129, 0, 7, 300,
                    64, 65, 1, 0, 31},
       .page_size = 64, .with_sinks = true},
      with_balanced({kHeuristic}));
  add("all_empty_b4_h16_p64",
      {.batch = 4, .num_heads = 16, .seq_lens = {0, 0, 0, 0}, .page_size = 64, .with_sinks = true},
      every_split);
  return cases;
}

// A host problem's inputs and outputs on the device, with the same call on device pointers.
class DeviceProblem {
 public:
  explicit DeviceProblem(HostProblem& host)
      : q_(DeviceBuffer<bf16>::from_host(host.q)),
        kv_cache_(DeviceBuffer<bf16>::from_host(host.kv_cache)),
        page_table_(DeviceBuffer<std::int32_t>::from_host(host.page_table)),
        seq_lens_(DeviceBuffer<std::int32_t>::from_host(host.seq_lens)),
        sinks_(DeviceBuffer<float>::from_host(host.sinks)),
        out_(host.out.size()),
        lse_(host.lse.size()),
        params_(host.params()) {
    params_.q = q_.data();
    params_.kv_cache = kv_cache_.data();
    params_.page_table = page_table_.data();
    params_.seq_lens = seq_lens_.data();
    params_.sink_logits = host.sinks.empty() ? nullptr : sinks_.data();
    params_.out = out_.data();
    params_.lse = lse_.data();
  }

  const DecodeParams& params() const { return params_; }
  void upload_seq_lens(const std::vector<std::int32_t>& seq_lens) { seq_lens_.upload(seq_lens); }

  // Every byte kPoisonByte, as HostProblem::poison_outputs does on the host.
  void poison_outputs(cudaStream_t stream) const {
    MLALAB_CUDA_TRY(cudaMemsetAsync(out_.data(), bench::kPoisonByte, out_.bytes(), stream));
    MLALAB_CUDA_TRY(cudaMemsetAsync(lse_.data(), bench::kPoisonByte, lse_.bytes(), stream));
  }
  std::vector<bf16> download_out() const { return out_.download(); }
  std::vector<float> download_lse() const { return lse_.download(); }

 private:
  DeviceBuffer<bf16> q_, kv_cache_;
  DeviceBuffer<std::int32_t> page_table_, seq_lens_;
  DeviceBuffer<float> sinks_;
  DeviceBuffer<bf16> out_;
  DeviceBuffer<float> lse_;
  DecodeParams params_;
};

// One workspace for the whole sweep, grown to the largest plan seen.
class Workspace {
 public:
  void* reserve(std::size_t bytes) {
    if (bytes > buffer_.size()) buffer_ = DeviceBuffer<std::byte>(bytes);
    return bytes > 0 ? buffer_.data() : nullptr;
  }

 private:
  DeviceBuffer<std::byte> buffer_;
};

struct LaunchOutcome {
  std::optional<InputError> rejected{};  // validation failed: nothing was launched
  cudaError_t status = cudaSuccess;      // the launch's own return, then cudaGetLastError
};

// Validates the call (shapes on the device params, tables on their host copies), and launches
// only if it is valid: the order every caller of the kernels must follow.
LaunchOutcome validate_and_launch(const DecodeParams& device_params, const HostProblem& host,
                                  const KernelConfig& config, const kernels::LaunchPlan& plan,
                                  void* workspace, cudaStream_t stream) {
  if (auto error = validate_shapes(device_params)) return {.rejected = std::move(error)};
  if (auto error = validate_tables(device_params, host.page_table.data(), host.seq_lens.data())) {
    return {.rejected = std::move(error)};
  }
  cudaError_t status = kernels::launch(device_params, config, plan, workspace, stream).error;
  if (status == cudaSuccess) status = cudaGetLastError();
  return {.status = status};
}

// A case made ready for every variant: host problem, reference result, device copy.
struct PreparedCase {
  std::string name{};
  HostProblem host{};
  kernels::ReferenceResult ref{};
  std::unique_ptr<DeviceProblem> device{};
  std::vector<SplitPolicy> splits{};
};

// A selection from the environment: the regex in `variable`, or everything when it is unset.
std::regex selection_from_env(const char* variable) {
  const char* pattern = std::getenv(variable);
  return std::regex(pattern != nullptr ? pattern : ".*");
}

// MLALAB_TEST_CASES (a regex on the case name) narrows the cases, e.g. for racecheck.
std::vector<PreparedCase> prepare_cases(Layout layout) {
  std::vector<PreparedCase> prepared;
  std::uint64_t seed = layout == Layout::kV3 ? 1000 : 2000;
  const std::regex selected = selection_from_env("MLALAB_TEST_CASES");
  for (CaseSpec& spec : sweep_cases()) {
    spec.problem.layout = layout;
    spec.problem.seed = seed++;  // before the filter: a case's data never depends on it
    if (!std::regex_search(spec.name, selected)) continue;
    PreparedCase& prepared_case = prepared.emplace_back(
        PreparedCase{.name = spec.name, .host = bench::make_problem(spec.problem)});
    prepared_case.ref = kernels::reference_decode(prepared_case.host.params());
    prepared_case.device = std::make_unique<DeviceProblem>(prepared_case.host);
    prepared_case.splits = spec.splits;
  }
  return prepared;
}

int sm_count() {
  int device = 0;
  int count = 0;
  MLALAB_CUDA_TRY(cudaGetDevice(&device));
  MLALAB_CUDA_TRY(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device));
  return count;
}

// What one variant did over the sweep of one layout.
struct VariantTally {
  int cases = 0;
  int failures = 0;
  double max_err_out = 0.0;
  double max_err_lse = 0.0;
};

// What every launch of the sweep shares.
struct SweepContext {
  Layout layout = Layout::kV3;
  int sm_count = 0;
  bench::CudaStream stream{};
  Workspace workspace{};
};

// Launches one case on one variant with outputs poisoned, checks the result and adds it to the
// tally. An asynchronous fault (after which the CUDA context is unusable) is a fatal failure.
void run_case(const kernels::Variant& variant, const kernels::DeviceSlots& slots,
              const PreparedCase& prepared, const SplitPolicy& split, SweepContext& context,
              VariantTally& tally) {
  const DecodeParams& params = prepared.device->params();
  const KernelConfig config{.shape = variant.shape, .split = split};
  const kernels::LaunchPlan plan =
      kernels::plan_launch(params, config, prepared.host.max_seq_len(), slots);
  const std::string where = fmt::format(
      "{} {} {} split {} ({})", variant.name, name_of(context.layout), prepared.name,
      split.to_string(),
      plan.balanced() ? fmt::format("{} workers", plan.workers)
                      : fmt::format("{} splits", plan.num_splits));
  ++tally.cases;
  const auto fail = [&](const std::string& what) {
    if (++tally.failures <= kMaxReportedFailures) ADD_FAILURE() << where << ": " << what;
  };

  const cudaStream_t stream = context.stream.get();
  prepared.device->poison_outputs(stream);
  const LaunchOutcome outcome = validate_and_launch(
      params, prepared.host, config, plan, context.workspace.reserve(plan.workspace_bytes), stream);
  if (outcome.rejected) return fail("rejected by validation: " + outcome.rejected->message());
  if (outcome.status != cudaSuccess) {
    return fail(std::string("launch failed: ") + cudaGetErrorString(outcome.status));
  }
  try {
    context.stream.synchronize();
  } catch (const CudaError& error) {
    FAIL() << where << ": " << error.what() << " (stopping the sweep)";
  }

  const std::vector<bf16> out = prepared.device->download_out();
  const std::vector<float> lse = prepared.device->download_lse();
  const bench::CheckResult check =
      bench::check_against_reference(prepared.host, out, lse, prepared.ref);
  tally.max_err_out = std::max(tally.max_err_out, check.max_rel_err_out);
  tally.max_err_lse = std::max(tally.max_err_lse, check.max_rel_err_lse);
  if (!check.passed) {
    fail(fmt::format("{} (NaN {}, unwritten {})", check.first_failure, check.nan_count,
                     check.unwritten_count));
  }
}

// Runs every case on one variant, if it can run on this GPU at all, and prints its summary line.
// Returns whether the variant was feasible.
bool sweep_variant(const kernels::Variant& variant, const std::vector<PreparedCase>& cases,
                   SweepContext& context) {
  const std::string layout_name(name_of(context.layout));
  int ctas_per_sm = 0;
  const cudaError_t occupancy =
      kernels::max_ctas_per_sm(variant, dims_of(context.layout).d_qk, &ctas_per_sm);
  if (occupancy != cudaSuccess || ctas_per_sm < 1) {
    cudaGetLastError();  // a refused attribute is not sticky; clear it for the next variant
    std::printf("[ sweep    ] %s %s: infeasible on this GPU (%s), skipped\n", variant.name.c_str(),
                layout_name.c_str(),
                occupancy != cudaSuccess ? cudaGetErrorString(occupancy) : "0 resident CTAs/SM");
    return false;
  }

  const kernels::DeviceSlots slots{.sm_count = context.sm_count, .ctas_per_sm = ctas_per_sm};
  VariantTally tally;
  for (const PreparedCase& prepared : cases) {
    for (const SplitPolicy& split : prepared.splits) {
      run_case(variant, slots, prepared, split, context, tally);
      if (::testing::Test::HasFatalFailure()) return true;
    }
  }
  const std::string verdict =
      tally.failures == 0 ? "all passed" : fmt::format("{} FAILED", tally.failures);
  std::printf("[ sweep    ] %s %s: %d cases, %s, max rel err out %.2e lse %.2e, %d CTAs/SM\n",
              variant.name.c_str(), layout_name.c_str(), tally.cases, verdict.c_str(),
              tally.max_err_out, tally.max_err_lse, ctas_per_sm);
  std::fflush(stdout);
  return true;
}

// Sweeps every compiled variant that MLALAB_TEST_VARIANTS (a regex on the name; unset: all)
// selects, e.g. a few for compute-sanitizer, which runs kernels tens of times slower. Returns
// how many could run here; stops at a fatal failure.
int sweep_selected_variants(const std::vector<PreparedCase>& cases, SweepContext& context) {
  const std::regex selected = selection_from_env("MLALAB_TEST_VARIANTS");
  int feasible_variants = 0;
  for (const kernels::Variant& variant : kernels::compiled_variants()) {
    if (!std::regex_search(variant.name, selected)) continue;
    if (sweep_variant(variant, cases, context)) ++feasible_variants;
    if (::testing::Test::HasFatalFailure()) break;
  }
  return feasible_variants;
}

class DecodeSweep : public ::testing::TestWithParam<Layout> {};

TEST_P(DecodeSweep, EveryFeasibleVariantMatchesTheReference) {
  MLALAB_REQUIRE_GPU();
  SweepContext context{.layout = GetParam(), .sm_count = sm_count()};
  const std::string layout_name(name_of(context.layout));

  const auto start = std::chrono::steady_clock::now();
  const auto seconds_since_start = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  const std::vector<PreparedCase> cases = prepare_cases(context.layout);
  std::printf("[ sweep    ] %s: %zu problems prepared (reference included) in %.1f s\n",
              layout_name.c_str(), cases.size(), seconds_since_start());
  for (const PreparedCase& prepared : cases) {
    const auto error = validate_tables(prepared.device->params(), prepared.host.page_table.data(),
                                       prepared.host.seq_lens.data());
    ASSERT_FALSE(error) << prepared.name << ": " << error->message();
  }

  const int feasible_variants = sweep_selected_variants(cases, context);
  if (HasFatalFailure()) return;
  EXPECT_GT(feasible_variants, 0) << "no compiled variant can run on this GPU";
  std::printf("[ sweep    ] %s: %d feasible variants, %.1f s in all\n", layout_name.c_str(),
              feasible_variants, seconds_since_start());
}

INSTANTIATE_TEST_SUITE_P(Layouts, DecodeSweep, ::testing::Values(Layout::kV3, Layout::kV4),
                         [](const ::testing::TestParamInfo<Layout>& info) {
                           return std::string(name_of(info.param));
                         });

// Scales every KV row of token t of each sequence by 1 + 24 t / len.
void climb_scores(HostProblem& host) {
  for (int b = 0; b < host.spec.batch; ++b) {
    const int len = host.seq_lens[b];
    for (int t = 0; t < len; ++t) {
      const int page = host.page_table[static_cast<std::size_t>(b) * host.max_pages_per_seq +
                                       t / host.spec.page_size];
      bf16* row = host.kv_cache.data() +
                  (static_cast<std::size_t>(page) * host.spec.page_size +
                   t % host.spec.page_size) * host.dims.d_qk;
      const float scale = 1.0f + 24.0f * static_cast<float>(t) / static_cast<float>(len);
      for (int d = 0; d < host.dims.d_qk; ++d) row[d] = to_bf16(to_float(row[d]) * scale);
    }
  }
}

// The wgmma kernel moves its running maximum only when a step's passes it by more than 8
// (base 2), so that O is rarely rescaled (docs/perf-notes.md, version 25). The sweep's scores
// (standard deviation ~0.6) set the maximum in a sequence's first step and seldom move it
// again; here they climb (climb_scores), so the logits' spread grows ~25-fold along each
// sequence and the maximum passes the running one by more than 8 many times, by less than 8
// (P up to 2⁸) in between. Both families, split and balanced launches, both layouts, against
// the fp64 reference on the scaled cache.
TEST(DecodeClimbingScores, TheRunningMaximumMovesAsOftenAsItMust) {
  MLALAB_REQUIRE_GPU();
  for (const Layout layout : {Layout::kV3, Layout::kV4}) {
    SweepContext context{.layout = layout, .sm_count = sm_count()};
    std::vector<PreparedCase> cases;
    PreparedCase& climbing = cases.emplace_back(PreparedCase{
        .name = "climbing_b3_h128_p64",
        .host = bench::make_problem({.layout = layout, .batch = 3, .num_heads = 128,
                                     .seq_lens = {4097, 700, 65}, .page_size = 64,
                                     .with_sinks = true, .seed = 91})});
    climb_scores(climbing.host);
    climbing.ref = kernels::reference_decode(climbing.host.params());
    climbing.device = std::make_unique<DeviceProblem>(climbing.host);
    climbing.splits = {fixed(1), kHeuristic, balanced(0)};
    const int feasible_variants = sweep_selected_variants(cases, context);
    if (HasFatalFailure()) return;
    EXPECT_GT(feasible_variants, 0) << "no compiled variant can run on this GPU";
  }
}

// The library tells "your input is wrong" from "this variant cannot run here": a tuner takes
// another variant for the second, a caller fixes the first. Both used to be
// cudaErrorInvalidValue.
TEST(DecodeValidation, ABadInputIsRefusedAsSuchNamingTheField) {
  MLALAB_REQUIRE_GPU();
  HostProblem host = bench::make_problem({.batch = 2, .num_heads = 16, .seq_lens = {10, 64}});
  DeviceProblem device(host);
  const kernels::Variant& variant = kernels::compiled_variants().front();
  const KernelConfig config{.shape = variant.shape, .split = fixed(1)};
  const kernels::LaunchPlan plan = kernels::plan_launch(device.params(), config, 64,
                                                        kernels::DeviceSlots{});
  DecodeParams bad = device.params();
  bad.num_heads = 0;
  const bench::CudaStream stream;
  const kernels::LaunchStatus status = kernels::launch(bad, config, plan, nullptr, stream.get());
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.refusal, kernels::LaunchRefusal::kInvalidInput);
  EXPECT_EQ(kernels::launch_failure_text(status, bad, config),
            "invalid input: " + validate_shapes(bad)->message());
  EXPECT_EQ(validate_shapes(bad)->field, "num_heads");
}

TEST(DecodeValidation, AVariantOverTheSharedMemoryLimitCannotRunHere) {
  MLALAB_REQUIRE_GPU();
  HostProblem host = bench::make_problem({.layout = Layout::kV3, .batch = 1, .num_heads = 16,
                                          .seq_lens = {64}});
  DeviceProblem device(host);
  const int limit = kernels::current_device().smem_optin_bytes;
  const kernels::Variant* too_big = nullptr;
  for (const kernels::Variant& variant : kernels::compiled_variants()) {
    if (kernels::decode_smem_bytes(variant.shape, host.dims.d_qk) > limit) too_big = &variant;
  }
  if (too_big == nullptr) {
    GTEST_SKIP() << "no compiled variant needs more than this GPU's " << limit
                 << " B of shared memory at V3 (compile h64_t64_w8_s4 for this test)";
  }
  const KernelConfig config{.shape = too_big->shape, .split = fixed(1)};
  const kernels::LaunchPlan plan = kernels::plan_launch(device.params(), config, 64,
                                                        kernels::DeviceSlots{});
  ASSERT_FALSE(validate_shapes(device.params()));  // the input itself is fine
  const bench::CudaStream stream;
  const kernels::LaunchStatus status =
      kernels::launch(device.params(), config, plan, nullptr, stream.get());
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(status.refusal, kernels::LaunchRefusal::kCannotRunHere);
  const std::string text = kernels::launch_failure_text(status, device.params(), config);
  EXPECT_EQ(text.rfind("cannot run here: needs ", 0), 0u) << text;
  EXPECT_NE(text.find("this GPU allows " + std::to_string(limit) + " B"), std::string::npos)
      << text;
  EXPECT_EQ(kernels::cannot_run_reason(config.shape, host.dims.d_qk),
            text.substr(std::string("cannot run here: ").size()));
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);  // refused before CUDA was asked
}

TEST(DecodeValidation, SequenceLongerThanItsPagesIsRejectedBeforeLaunch) {
  MLALAB_REQUIRE_GPU();
  HostProblem host = bench::make_problem(
      {.batch = 3, .num_heads = 16, .seq_lens = {10, 64, 5}, .page_size = 64});
  DeviceProblem device(host);
  // An out-of-range length, as a caller might pass it: the kernel would read page-table
  // entries past the row and pages that do not exist.
  host.seq_lens[1] = host.max_pages_per_seq * host.spec.page_size + 1;
  device.upload_seq_lens(host.seq_lens);

  const bench::CudaStream stream;
  Workspace workspace;
  const kernels::Variant& variant = kernels::compiled_variants().front();
  const KernelConfig config{.shape = variant.shape, .split = fixed(1)};
  const kernels::LaunchPlan plan = kernels::plan_launch(device.params(), config, 64,
                                                        kernels::DeviceSlots{});
  device.poison_outputs(stream.get());
  const LaunchOutcome outcome = validate_and_launch(
      device.params(), host, config, plan, workspace.reserve(plan.workspace_bytes), stream.get());
  stream.synchronize();

  ASSERT_TRUE(outcome.rejected);
  EXPECT_EQ(outcome.rejected->field, "seq_lens[1]");
  EXPECT_EQ(outcome.rejected->value, "65");
  // Nothing was launched: the outputs still hold the poison.
  const std::vector<bf16> out = device.download_out();
  EXPECT_TRUE(std::all_of(out.begin(), out.end(), [](bf16 v) { return bench::is_poison(v); }));
  const std::vector<float> lse = device.download_lse();
  EXPECT_TRUE(std::all_of(lse.begin(), lse.end(), [](float v) { return bench::is_poison(v); }));
}

}  // namespace
}  // namespace mlalab
