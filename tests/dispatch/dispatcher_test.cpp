// What the dispatcher decides without launching: the config and plan of each key, the table's
// identity check, and what prepare and run do before any kernel. Plans here are derived by
// hand; without a GPU the heuristic sees one slot (1 SM, 1 CTA), where one split is always
// cheapest, so the splits that differ by key come from table entries.
#include "dispatch/dispatcher.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <functional>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "core/validate.h"
#include "kernels/device.h"
#include "kernels/registry.h"
#include "kernels/wgmma/traits.h"

namespace mlalab::dispatch {
namespace {

constexpr int kHeads = 16;
constexpr int kPageSize = 64;
constexpr const char* kPortableDefault = "h16_t16_w4_s2";
constexpr const char* kTabledVariant = "h64_t32_w8_s2";  // not a default: the entry chose it
// Excluded from every build (it would spill: cmake/variants.cmake), yet a well-formed name.
constexpr const char* kNeverCompiled = "h64_t16_w4_s2";

// Skips the test when `name` is not in this build. A macro: GTEST_SKIP() returns from the
// function it is in, so in a helper it would skip nothing and the test would go on.
#define SKIP_UNLESS_COMPILED(name)                 \
  if (kernels::find_variant(name) == nullptr)      \
  GTEST_SKIP() << (name) << " is not compiled into this build (MLALAB_VARIANTS)"

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The message of the exception `call` throws, or "" when it throws none.
template <typename Exception>
std::string message_of(const std::function<void()>& call) {
  try {
    call();
  } catch (const Exception& error) {
    return error.what();
  }
  return "";
}

void expect_same_plan(const kernels::LaunchPlan& a, const kernels::LaunchPlan& b) {
  EXPECT_EQ(a.head_blocks, b.head_blocks);
  EXPECT_EQ(a.num_splits, b.num_splits);
  EXPECT_EQ(a.ctas, b.ctas);
  EXPECT_EQ(a.workspace_bytes, b.workspace_bytes);
}

TableEntry entry(int batch, int context, std::string variant, int splits) {
  TableEntry made;
  made.batch = batch;
  made.context = context;
  made.variant = std::move(variant);
  made.splits = splits;
  return made;
}

// A table tuned in this process for V3, 16 heads, page 64, at batch buckets {1, 8, 64} and
// context buckets {1024, 4096}, with entries at (8, 1024) and (8, 4096) only.
TuningTable table_here() {
  const std::vector<std::string> candidates = {kPortableDefault, kTabledVariant};
  TuningTable table;
  table.identity = identity_here(Layout::kV3, kHeads, kPageSize, candidates);
  table.batch_buckets = {1, 8, 64};
  table.context_buckets = {1024, 4096};
  table.entries = {entry(8, 1024, kTabledVariant, 8), entry(8, 4096, kTabledVariant, 8)};
  return table;
}

ResolvedLaunch resolve(const TuningTable* table, DispatchKey key) {
  return resolve_launch(Layout::kV3, kHeads, kPageSize, table, key);
}

// A call of the dispatcher's problem with no buffers: every launch refuses it as invalid
// input before touching a GPU.
DecodeParams call_without_buffers(int batch) {
  const LayoutDims dims = dims_of(Layout::kV3);
  return DecodeParams{.batch = batch, .num_heads = kHeads, .d_qk = dims.d_qk, .d_v = dims.d_v,
                      .page_size = kPageSize};
}

TEST(DispatchKey, SaysBatchAndMaxContext) {
  EXPECT_EQ((DispatchKey{.batch = 8, .max_context = 4096}).to_string(),
            "batch 8, max context 4096");
}

// The first of `preferred` compiled here on sm_90a; else the portable default (what
// default_config falls back to off sm_90a or when none is compiled).
std::string first_on_sm90a(std::initializer_list<const char*> preferred) {
  const bool sm90a =
      kernels::current_device().compute_capability == kernels::wgmma::kComputeCapability;
  for (const char* name : preferred) {
    if (sm90a && kernels::find_variant(name) != nullptr) return name;
  }
  return kPortableDefault;
}

// What default_config picks where the 64-head wgmma kernel would pay: the 32-token variant,
// else the 64-token one.
std::string wgmma_where_it_runs() {
  return first_on_sm90a({"wgmma_h64_t32_w8_s4", "wgmma_h64_t64_w8_s2"});
}

// Where up to 16 heads get the swapped kernel.
std::string swapped_where_it_runs() { return first_on_sm90a({"wgmma_h16_t64_w4_s2"}); }

TEST(DefaultConfig, SixteenHeadsOfFewTokensOrASmallBatchGetTheSwappedKernelWhereItRuns) {
  SKIP_UNLESS_COMPILED(kPortableDefault);
  const std::string expected = swapped_where_it_runs();
  const DispatchKey swapped_keys[] = {{.batch = 1, .max_context = 4096},
                                      {.batch = 7, .max_context = 65536},
                                      {.batch = 8, .max_context = 1024},
                                      {.batch = 16, .max_context = 2047},
                                      {.batch = 63, .max_context = 4096}};  // 258,048 tokens
  for (const DispatchKey key : swapped_keys) {
    for (const int heads : {1, 16}) {
      const KernelConfig config = default_config(Layout::kV3, heads, key);
      EXPECT_EQ(variant_name(config.shape), expected) << key.to_string();
      EXPECT_EQ(config.split, SplitPolicy{});
    }
  }
  // 17 heads are two of its head blocks: the rule as before it.
  EXPECT_EQ(variant_name(default_config(Layout::kV3, 17, {.batch = 1, .max_context = 4096}).shape),
            kPortableDefault);
}

TEST(DefaultConfig, WgmmaForManyHeadsOrManyTokensOnSm90a) {
  SKIP_UNLESS_COMPILED(kPortableDefault);
  const std::string expected = wgmma_where_it_runs();
  const auto variant = [](Layout layout, int heads, int batch, int max_context) {
    return variant_name(
        default_config(layout, heads, {.batch = batch, .max_context = max_context}).shape);
  };
  EXPECT_EQ(variant(Layout::kV3, 128, 1, 64), expected);
  EXPECT_EQ(variant(Layout::kV4, 64, 1, 4096), expected);
  EXPECT_EQ(variant(Layout::kV3, 63, 1, 4096), kPortableDefault);
  EXPECT_EQ(variant(Layout::kV3, 32, 8, 4096), expected);   // 32,768 tokens: the edge
  EXPECT_EQ(variant(Layout::kV3, 32, 32, 1024), expected);
  EXPECT_EQ(variant(Layout::kV3, kHeads, 64, 4096), expected);  // 262,144 tokens: the edge
  EXPECT_EQ(variant(Layout::kV4, kHeads, 128, 4096), expected);
}

TEST(ResolveLaunch, WithoutATableTheDefaultSaysSo) {
  SKIP_UNLESS_COMPILED(kPortableDefault);
  const ResolvedLaunch resolved = resolve(nullptr, {.batch = 4, .max_context = 4096});
  EXPECT_EQ(resolved.source, fmt::format("default: {}, heuristic split", swapped_where_it_runs()));
  EXPECT_EQ(variant_name(resolved.config.shape), swapped_where_it_runs());
  EXPECT_EQ(resolved.plan.head_blocks, 1);  // 16 heads, 16 per CTA
  EXPECT_EQ(resolved.plan.ctas, 4 * resolved.plan.num_splits);
}

// The table's entry (8, 4096) serves batch 5 and context 3000 (the smallest buckets ≥ each):
// h64_t32_w8_s2 at fixed:8. One CTA holds all 16 heads (block_h 64); 3000 tokens are 94 steps
// of 32, so all 8 splits have tokens: 5 · 1 · 8 = 40 CTAs, and the workspace holds 8 splits ·
// 5 sequences · 16 heads of 512 floats of partial out and 1 of lse:
// 8 · 5 · 16 · 513 · 4 = 1,313,280 B.
TEST(ResolveLaunch, ATableEntryGivesItsVariantAndFixedSplit) {
  SKIP_UNLESS_COMPILED(kTabledVariant);
  const TuningTable table = table_here();
  const ResolvedLaunch resolved = resolve(&table, {.batch = 5, .max_context = 3000});
  EXPECT_EQ(resolved.source, "table: entry batch 8, context 4096");
  EXPECT_EQ(variant_name(resolved.config.shape), kTabledVariant);
  EXPECT_EQ(resolved.config.split, (SplitPolicy{.kind = SplitPolicy::Kind::kFixed, .value = 8}));
  EXPECT_EQ(resolved.plan.head_blocks, 1);
  EXPECT_EQ(resolved.plan.num_splits, 8);
  EXPECT_EQ(resolved.plan.ctas, 40);
  EXPECT_EQ(resolved.plan.workspace_bytes, 1313280u);
}

// An entry may be a balanced launch: its workers per head block, whatever the batch (the
// tuner raced one wave of them). h64_t32_w8_s2 holds all 16 heads in one head block, so 6
// workers are 6 CTAs, and no sequence is split.
TEST(ResolveLaunch, ABalancedEntryGivesItsWorkers) {
  SKIP_UNLESS_COMPILED(kTabledVariant);
  TuningTable table = table_here();
  table.entries[0].workers = 6;
  table.entries[0].splits = 1;
  const ResolvedLaunch resolved = resolve(&table, {.batch = 5, .max_context = 1000});
  EXPECT_EQ(resolved.source, "table: entry batch 8, context 1024");
  EXPECT_EQ(resolved.config.split,
            (SplitPolicy{.kind = SplitPolicy::Kind::kBalanced, .value = 6}));
  EXPECT_EQ(resolved.plan.workers, 6);
  EXPECT_EQ(resolved.plan.num_splits, 1);
  EXPECT_EQ(resolved.plan.ctas, 6);
  EXPECT_GT(resolved.plan.workspace_bytes, 0u);
}

// A key the table has no entry for (batch bucket 64) gets the default, as without a table.
TEST(ResolveLaunch, AKeyWithoutATableEntryGetsTheDefault) {
  SKIP_UNLESS_COMPILED(kPortableDefault);
  const TuningTable table = table_here();
  const ResolvedLaunch resolved = resolve(&table, {.batch = 64, .max_context = 4096});
  EXPECT_EQ(resolved.source, fmt::format("default: {}, heuristic split", wgmma_where_it_runs()));
  expect_same_plan(resolved.plan, resolve(nullptr, {.batch = 64, .max_context = 4096}).plan);
}

// The plan is a function of the key: resolving another key between two resolutions changes
// nothing. The max context may change it: entry (8, 1024)'s fixed:8 is capped at the
// 64 / 32 = 2 steps of a 64-token context, so that every split has tokens.
TEST(ResolveLaunch, ThePlanDependsOnTheKeyAlone) {
  SKIP_UNLESS_COMPILED(kTabledVariant);
  const TuningTable table = table_here();
  const DispatchKey key{.batch = 5, .max_context = 64};
  const ResolvedLaunch first = resolve(&table, key);
  EXPECT_EQ(first.source, "table: entry batch 8, context 1024");
  EXPECT_EQ(first.plan.num_splits, 2);
  EXPECT_EQ(resolve(&table, {.batch = 5, .max_context = 3000}).plan.num_splits, 8);
  const ResolvedLaunch again = resolve(&table, key);
  expect_same_plan(again.plan, first.plan);
  EXPECT_EQ(again.source, first.source);
}

// Whatever else a dispatcher prepared, and in whichever order, a key gets resolve_launch's plan.
TEST(Dispatcher, PreparesEachKeyAsResolveLaunchDoesInAnyOrder) {
  SKIP_UNLESS_COMPILED(kPortableDefault);
  const std::vector<DispatchKey> keys = {{.batch = 1, .max_context = 1},
                                         {.batch = 5, .max_context = 64},
                                         {.batch = 64, .max_context = 16384}};
  const std::vector<DispatchKey> reversed(keys.rbegin(), keys.rend());
  Dispatcher together(Layout::kV3, kHeads, kPageSize);
  together.prepare(keys);
  Dispatcher one_by_one(Layout::kV3, kHeads, kPageSize);
  for (const DispatchKey& key : reversed) one_by_one.prepare(std::vector{key});
  for (const DispatchKey& key : keys) {
    const ResolvedLaunch expected = resolve(nullptr, key);
    for (const Dispatcher* dispatcher : {&together, &one_by_one}) {
      ASSERT_NE(dispatcher->find(key), nullptr) << key.to_string();
      expect_same_plan(dispatcher->find(key)->plan, expected.plan);
      EXPECT_EQ(dispatcher->find(key)->source, expected.source);
    }
  }
}

TEST(Dispatcher, AProblemNoCallCouldHaveIsRefusedNamingTheField) {
  const auto refusal = [](int heads, int page_size) {
    return message_of<std::invalid_argument>(
        [&] { Dispatcher dispatcher(Layout::kV3, heads, page_size); });
  };
  EXPECT_EQ(refusal(0, 64), "dispatcher: num_heads = 0: allowed [1, 128]");
  EXPECT_EQ(refusal(129, 64), "dispatcher: num_heads = 129: allowed [1, 128]");
  EXPECT_EQ(refusal(16, 48), "dispatcher: page_size = 48: allowed a power of two in [1, 128]");
  EXPECT_EQ(refusal(16, 256), "dispatcher: page_size = 256: allowed a power of two in [1, 128]");
}

TEST(ResolveLaunch, AKeyOutOfRangeIsRefusedNamingTheField) {
  const auto refusal = [](DispatchKey key) {
    return message_of<std::invalid_argument>([&] { resolve(nullptr, key); });
  };
  EXPECT_EQ(refusal({.batch = 0, .max_context = 4096}),
            "dispatch key: batch = 0: allowed [1, 65536]");
  EXPECT_EQ(refusal({.batch = kMaxBatch + 1, .max_context = 4096}),
            "dispatch key: batch = 65537: allowed [1, 65536]");
  EXPECT_EQ(refusal({.batch = 8, .max_context = 0}),
            "dispatch key: max_context = 0: allowed ≥ 1 (tokens)");
  EXPECT_EQ(refusal({.batch = 8, .max_context = -5}),
            "dispatch key: max_context = -5: allowed ≥ 1 (tokens)");
}

TEST(ResolveLaunch, AnEntryOfAVariantNotCompiledIsAnError) {
  TuningTable table = table_here();
  table.entries[1].variant = kNeverCompiled;
  EXPECT_EQ(message_of<std::runtime_error>([&] {
              resolve(&table, {.batch = 8, .max_context = 4096});
            }),
            "tuning table entry batch 8, context 4096: h64_t16_w4_s2 is not compiled into this "
            "build (MLALAB_VARIANTS)");
  table.entries[1].variant = "fastest";
  EXPECT_EQ(message_of<std::runtime_error>([&] {
              resolve(&table, {.batch = 8, .max_context = 4096});
            }),
            "tuning table entry batch 8, context 4096: 'fastest' is not a variant name");
}

TEST(Dispatcher, AcceptsATableTunedHere) {
  SKIP_UNLESS_COMPILED(kTabledVariant);
  EXPECT_NO_THROW({ const Dispatcher dispatcher(Layout::kV3, kHeads, kPageSize, table_here()); });
}

TEST(Dispatcher, RefusesATableOfAnotherGpuNamingTheField) {
  TuningTable table = table_here();
  table.identity.gpu = "NVIDIA H100 80GB HBM3";
  const std::string message = message_of<TableError>(
      [&] { const Dispatcher dispatcher(Layout::kV3, kHeads, kPageSize, table); });
  EXPECT_TRUE(message.starts_with("the tuning table does not fit this process: gpu")) << message;
}

TEST(Dispatcher, RefusesATableOfAnotherProblemNamingTheField) {
  const auto refusal = [](Layout layout, int heads, int page_size) {
    return message_of<TableError>(
        [&] { const Dispatcher dispatcher(layout, heads, page_size, table_here()); });
  };
  const std::string layout = refusal(Layout::kV4, kHeads, kPageSize);
  EXPECT_TRUE(contains(layout, "fit this process: layout")) << layout;
  const std::string heads = refusal(Layout::kV3, 128, kPageSize);
  EXPECT_TRUE(contains(heads, "fit this process: num_heads")) << heads;
  const std::string page_size = refusal(Layout::kV3, kHeads, 16);
  EXPECT_TRUE(contains(page_size, "fit this process: page_size")) << page_size;
}

// Without a GPU, keys whose plans need no workspace are prepared (plans need no GPU); a key
// needing one is refused with the reason, and nothing of that prepare() call is kept.
TEST(DispatcherNoGpu, PreparesKeysWithoutWorkspaceAndRefusesTheOthers) {
  if (kernels::current_device().present) {
    GTEST_SKIP() << "a GPU is present: dispatcher_gpu_test prepares with one";
  }
  SKIP_UNLESS_COMPILED(kTabledVariant);
  Dispatcher dispatcher(Layout::kV3, kHeads, kPageSize, table_here());
  const std::vector<DispatchKey> without_workspace = {{.batch = 1, .max_context = 4096},
                                                      {.batch = 64, .max_context = 4096}};
  dispatcher.prepare(without_workspace);
  for (const DispatchKey& key : without_workspace) EXPECT_NE(dispatcher.find(key), nullptr);
  EXPECT_EQ(dispatcher.workspace_bytes(), 0u);

  // Batch 8 gets the entry's 8 splits: 8 · 8 · 16 · 513 · 4 = 2,101,248 B of workspace.
  const std::vector<DispatchKey> mixed = {{.batch = 2, .max_context = 100},
                                          {.batch = 8, .max_context = 4096}};
  EXPECT_EQ(message_of<std::runtime_error>([&] { dispatcher.prepare(mixed); }),
            "Dispatcher::prepare: batch 8, max context 4096 needs 2,101,248 B of split-KV "
            "workspace, and there is no CUDA device to allocate it on");
  for (const DispatchKey& key : mixed) EXPECT_EQ(dispatcher.find(key), nullptr);
  for (const DispatchKey& key : without_workspace) EXPECT_NE(dispatcher.find(key), nullptr);
  EXPECT_EQ(dispatcher.workspace_bytes(), 0u);
}

TEST(Dispatcher, ABadKeyPreparesNothing) {
  SKIP_UNLESS_COMPILED(kPortableDefault);
  Dispatcher dispatcher(Layout::kV3, kHeads, kPageSize);
  const std::vector<DispatchKey> keys = {{.batch = 1, .max_context = 64},
                                         {.batch = 1, .max_context = 0}};
  EXPECT_THROW(dispatcher.prepare(keys), std::invalid_argument);
  EXPECT_EQ(dispatcher.find(keys[0]), nullptr);
}

// Outside a capture run() prepares the key itself; the launch then refuses the call (it has no
// buffers) before any CUDA work, and says so in the status.
TEST(Dispatcher, RunPreparesAnUnpreparedKeyOutsideCapture) {
  SKIP_UNLESS_COMPILED(kPortableDefault);
  Dispatcher dispatcher(Layout::kV3, kHeads, kPageSize);
  const kernels::LaunchStatus status =
      dispatcher.run(call_without_buffers(4), /*max_context=*/64, /*stream=*/nullptr);
  EXPECT_EQ(status.refusal, kernels::LaunchRefusal::kInvalidInput);
  ASSERT_NE(dispatcher.find({.batch = 4, .max_context = 64}), nullptr);
  EXPECT_EQ(dispatcher.find({.batch = 4, .max_context = 64})->source,
            "default: h16_t16_w4_s2, heuristic split");
}

TEST(Dispatcher, RunRefusesACallOfAnotherProblem) {
  Dispatcher dispatcher(Layout::kV3, kHeads, kPageSize);
  DecodeParams other_heads = call_without_buffers(4);
  other_heads.num_heads = kHeads + 1;
  const kernels::LaunchStatus status = dispatcher.run(other_heads, 64, nullptr);
  EXPECT_EQ(status.refusal, kernels::LaunchRefusal::kInvalidInput);
  EXPECT_EQ(dispatcher.find({.batch = 4, .max_context = 64}), nullptr);
}

TEST(Dispatcher, RunRefusesAKeyOutOfRange) {
  Dispatcher dispatcher(Layout::kV3, kHeads, kPageSize);
  EXPECT_EQ(message_of<std::invalid_argument>([&] {
              dispatcher.run(call_without_buffers(4), /*max_context=*/0, nullptr);
            }),
            "dispatch key: max_context = 0: allowed ≥ 1 (tokens)");
}

}  // namespace
}  // namespace mlalab::dispatch
