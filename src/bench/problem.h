#pragma once
// Random decode problems on the host, for tests and benchmarks. Inputs are drawn from a seeded
// generator (the same seed gives the same problem on every platform), and everything a correct
// backend must never read or leave alone is booby-trapped: cache rows past a sequence's end
// are NaN, page-table entries past a sequence's last page point outside the cache, and the
// outputs start poisoned, so a read past the end or a row left unwritten shows up in the check.
#include <cstdint>
#include <vector>

#include "core/bf16.h"
#include "core/decode_params.h"
#include "core/layout.h"

namespace mlalab::bench {

// DeepSeek-V3's softmax scale. Its attention logits are q·k over qk_head_dim = 128 (no-rope
// part) + 64 (rope part) = 192 dimensions; the absorbed form changes the vectors' width but not
// the logits, so the scale stays 1/sqrt(192).
constexpr float kDeepSeekSoftmaxScale = 0.0721687836f;  // 1 / sqrt(192)

// Outputs are poisoned with every byte 0xFF (cudaMemset can write it on the device): a NaN in
// both bf16 (0xffff) and fp32 (0xffffffff) whose bit pattern no kernel's arithmetic produces
// in practice, so the check can tell "never written" from "computed a NaN".
constexpr int kPoisonByte = 0xff;
constexpr bf16 kPoisonBf16{.bits = 0xffff};
bool is_poison(bf16 value);
bool is_poison(float value);

struct ProblemSpec {
  Layout layout = Layout::kV3;
  int batch = 1;
  int num_heads = 16;
  std::vector<int> seq_lens{};  // one per batch entry
  int page_size = 64;
  bool with_sinks = false;
  bool permute_pages = true;  // scatter each sequence's pages randomly over the cache
  std::uint64_t seed = 1;
  float softmax_scale = kDeepSeekSoftmaxScale;
  bool operator==(const ProblemSpec&) const = default;
};

// The problem of an A/B-lab sweep point, which its kernel arms (ab/arms.cpp) and, through the
// PyTorch extension, its Python arms (python/mlalab/worker.py) get: pages scattered as in a
// real paged cache (as `mlalab bench` does), no sinks.
ProblemSpec lab_problem_spec(Layout layout, int num_heads, int page_size,
                             std::vector<int> seq_lens, std::uint64_t seed);

struct HostProblem {
  ProblemSpec spec{};
  LayoutDims dims{};
  int num_pages = 0;             // pages the sequences use, plus a few spare ones
  int max_pages_per_seq = 0;     // max over b of ceil(seq_lens[b] / page_size), at least 1
  std::vector<bf16> q{};         // [batch, num_heads, d_qk]
  std::vector<bf16> kv_cache{};  // [num_pages, page_size, d_qk]
  std::vector<bf16> out{};       // [batch, num_heads, d_v]
  std::vector<std::int32_t> page_table{};  // [batch, max_pages_per_seq]
  std::vector<std::int32_t> seq_lens{};    // [batch]
  std::vector<float> sinks{};              // [num_heads], empty without sinks
  std::vector<float> lse{};                // [batch, num_heads]

  // The call on these host buffers, with contiguous strides.
  DecodeParams params();
  // Fills out and lse with the poison pattern (every byte kPoisonByte).
  void poison_outputs();
  // The cache row holding token `token` of sequence `batch_index` (through the page table).
  bf16* kv_row(int batch_index, int token);
  const bf16* kv_row(int batch_index, int token) const;
  int max_seq_len() const;
};

// Builds a problem. q, the cache rows in use and the sinks are random; scores spread enough that
// the softmax is neither uniform nor one-hot. Throws std::invalid_argument for a spec that
// cannot be built (seq_lens.size() != batch, a negative length, batch, num_heads or page_size
// below 1); limits that validation checks (e.g. num_heads ≤ 128) are not enforced here, so
// that tests can build problems that validation must reject.
HostProblem make_problem(const ProblemSpec& spec);

// `batch` sequences of `len` tokens each.
std::vector<int> uniform_lengths(int batch, int len);

// `count` lengths, each an integer in [min_len, max_len] (1 ≤ min_len ≤ max_len), all equally
// likely, drawn from `seed`; length i depends only on the seed and i, so a smaller count draws
// the larger one's first lengths. The same seed gives the same lengths on every platform
// (std::mt19937_64 with our own mapping: the standard distributions are
// implementation-defined). The A/B lab's uniform context spec and every other drawn length
// (bench, tune) come from here.
std::vector<int> uniform_random_lengths(int count, int min_len, int max_len, std::uint64_t seed);

// `batch` lengths in [0, max_len], drawn from `seed`. They include max_len, 0 and 1 (in that
// order of priority, as far as batch allows), at random positions.
std::vector<int> mixed_lengths(int batch, int max_len, std::uint64_t seed);

}  // namespace mlalab::bench
