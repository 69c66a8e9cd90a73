#pragma once
// The tunable knobs of one kernel launch, kept apart from the problem (DecodeParams).
#include <optional>
#include <string>
#include <string_view>

namespace mlalab {

// How the KV sequence of each (batch, head block) is split across CTAs.
struct SplitPolicy {
  enum class Kind {
    kHeuristic,   // occupancy-aware default, see kernels/split_plan.h
    kFixed,       // exactly `value` splits (capped so every split has a step of tokens)
    kTargetCtas,  // smallest split count with batch · head_blocks · splits ≥ value
    kBalanced,    // a fixed grid of `value` workers per head block (0: one wave) sharing the
                  // batch's live tokens evenly, whatever the lengths (kernels/balanced_partition.h)
  };
  Kind kind = Kind::kHeuristic;
  int value = 0;

  std::string to_string() const;  // "heuristic", "fixed:8", "target_ctas:512", "balanced"
  bool operator==(const SplitPolicy&) const = default;
};

// Parses "heuristic", "fixed:N" (N in [1, kMaxSplits]), "target_ctas:T" (T in [1, 1<<20]),
// "balanced" (one wave of workers) or "balanced:W" (W in [1, kMaxBalancedWorkers]). On failure
// returns nullopt and, when `error` is given, a message naming the allowed forms.
std::optional<SplitPolicy> parse_split_policy(std::string_view text, std::string* error = nullptr);

// A launch's resolved split as result tables print it: "66 workers" (a balanced launch), "8"
// (splits per sequence), nullopt when not known (splits ≤ 0: an arm that is not a kernel).
std::optional<std::string> resolved_split_text(int splits, int workers);

constexpr int kMaxSplits = 256;
// A sequence of a balanced launch has at most one part per worker, and the combine keeps one
// weight per part in shared memory.
constexpr int kMaxBalancedWorkers = 1024;

// Which kernel family a variant belongs to. The portable family (warp-level mma.sync) runs on
// sm_80, sm_90 and sm_120; the wgmma family uses Hopper's warpgroup MMA and runs on sm_90a only.
enum class KernelFamily { kPortable, kWgmma };

// The compile-time shape of one variant; its name encodes it: h16_t16_w4_s2 (portable),
// wgmma_h64_t64_w8_s2 (wgmma family), wgmma_h16_t64_w4_s2_whole (whole_tiles).
struct VariantShape {
  KernelFamily family = KernelFamily::kPortable;
  int block_h = 0;  // query heads per CTA (rows of the MMA tiles)
  int block_t = 0;  // KV tokens per pipeline step
  int warps = 0;
  int stages = 0;   // cp.async pipeline depth, in KV tiles
  // The wgmma swapped kernel only: its MMA warps wait for a KV tile whole and free it whole,
  // instead of starting on the first of the two pieces it lands in and freeing each after
  // its own P·V. Pieces win where the memory system has slack; where it is saturated a CTA
  // that asks sooner can lose (docs/perf-notes.md, version 59), so the tuner races both.
  bool whole_tiles = false;
  bool operator==(const VariantShape&) const = default;
};

std::string variant_name(const VariantShape& shape);
std::optional<VariantShape> parse_variant_name(std::string_view name);

struct KernelConfig {
  VariantShape shape;
  SplitPolicy split;
};

}  // namespace mlalab
