#include "bench/problem.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>

namespace mlalab::bench {
namespace {

// Input magnitudes. Never zero, so that data read from the wrong place (a zeroed buffer, a
// row of another sequence) cannot pass for the real data by accident. With |x| uniform in
// [0.05, 1] and random signs, scores (1/sqrt(192) · q·k over 512 or 576 dimensions) have a
// standard deviation near 0.6: the softmax weights of a long sequence differ by factors of
// tens, which is neither uniform nor one-hot.
constexpr double kMinInputMagnitude = 0.05;
constexpr double kMaxInputMagnitude = 1.0;

// Sinks are centred on ln(max_len): exp(sink) is then of the order of Σ exp(score) (about
// max_len terms near exp(0)), so the sink visibly shrinks out at every length. ±2 spreads the
// heads from a small to a dominant sink.
constexpr double kSinkSpread = 2.0;

// Pages beyond those the sequences use: never referenced by a valid table entry, NaN-filled.
constexpr int kSparePages = 3;

// Page-table entries past a sequence's last page alternate between these two, so a kernel
// that reads one gets an index outside [0, num_pages) either way.
constexpr std::int32_t kPastEndBeyondCache = 1000;  // added to num_pages
constexpr std::int32_t kPastEndNegative = -1;

constexpr bf16 kCacheNaN{.bits = 0x7fc0};  // quiet NaN: rows no backend may read

// Draws from the raw 64-bit stream of std::mt19937_64, which the standard fixes; the standard
// distributions are implementation-defined and would give different problems on another
// standard library.
class Random {
 public:
  explicit Random(std::uint64_t seed) : engine_(seed) {}

  // Uniform in [0, 1), from the top 53 bits.
  double uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }
  double uniform(double low, double high) { return low + (high - low) * uniform(); }

  // Uniform in [0, count); the modulo bias is below count / 2^64, negligible here.
  std::uint64_t below(std::uint64_t count) { return engine_() % count; }

  // Magnitude uniform in [kMinInputMagnitude, kMaxInputMagnitude], random sign.
  bf16 input_value() {
    const std::uint64_t bits = engine_();
    const double unit = static_cast<double>(bits >> 11) * 0x1.0p-53;
    const double magnitude = kMinInputMagnitude + (kMaxInputMagnitude - kMinInputMagnitude) * unit;
    const bool negative = (bits & 1u) != 0;
    return to_bf16(static_cast<float>(negative ? -magnitude : magnitude));
  }

  // Fisher-Yates, with our own draws (std::shuffle's order is implementation-defined).
  template <typename T>
  void shuffle(std::vector<T>& values) {
    for (std::size_t i = values.size(); i > 1; --i) std::swap(values[i - 1], values[below(i)]);
  }

 private:
  std::mt19937_64 engine_;
};

int ceil_div(int a, int b) { return (a + b - 1) / b; }

void check_spec(const ProblemSpec& spec) {
  const auto fail = [](const std::string& why) {
    throw std::invalid_argument("make_problem: " + why);
  };
  if (spec.batch < 1) fail("batch must be >= 1, got " + std::to_string(spec.batch));
  if (spec.num_heads < 1) fail("num_heads must be >= 1, got " + std::to_string(spec.num_heads));
  if (spec.page_size < 1) fail("page_size must be >= 1, got " + std::to_string(spec.page_size));
  if (spec.seq_lens.size() != static_cast<std::size_t>(spec.batch)) {
    fail("seq_lens has " + std::to_string(spec.seq_lens.size()) + " entries for batch " +
         std::to_string(spec.batch));
  }
  for (const int len : spec.seq_lens) {
    if (len < 0) fail("negative sequence length " + std::to_string(len));
  }
}

// Offset in kv_cache of the row holding token `token` of sequence `batch_index`.
std::size_t kv_row_offset(const HostProblem& problem, int batch_index, int token) {
  if (batch_index < 0 || batch_index >= problem.spec.batch || token < 0 ||
      token >= problem.seq_lens[batch_index]) {
    throw std::out_of_range("HostProblem::kv_row: token " + std::to_string(token) +
                            " of batch entry " + std::to_string(batch_index) +
                            " is not part of a sequence");
  }
  const int page_size = problem.spec.page_size;
  const std::int32_t page =
      problem.page_table[static_cast<std::size_t>(batch_index) * problem.max_pages_per_seq +
                         token / page_size];
  const std::size_t row = static_cast<std::size_t>(page) * page_size + token % page_size;
  return row * problem.dims.d_qk;
}

}  // namespace

bool is_poison(bf16 value) { return value.bits == kPoisonBf16.bits; }

bool is_poison(float value) {
  constexpr std::uint32_t kPoisonFloatBits = 0xffffffffu;
  return std::bit_cast<std::uint32_t>(value) == kPoisonFloatBits;
}

DecodeParams HostProblem::params() {
  DecodeParams params{
      .q = q.data(),
      .kv_cache = kv_cache.data(),
      .page_table = page_table.data(),
      .seq_lens = seq_lens.data(),
      .sink_logits = sinks.empty() ? nullptr : sinks.data(),
      .out = out.data(),
      .lse = lse.data(),
      .batch = spec.batch,
      .num_heads = spec.num_heads,
      .d_qk = dims.d_qk,
      .d_v = dims.d_v,
      .page_size = spec.page_size,
      .num_pages = num_pages,
      .max_pages_per_seq = max_pages_per_seq,
      .softmax_scale = spec.softmax_scale,
  };
  set_contiguous_strides(params);
  return params;
}

void HostProblem::poison_outputs() {
  std::memset(out.data(), kPoisonByte, out.size() * sizeof(bf16));
  std::memset(lse.data(), kPoisonByte, lse.size() * sizeof(float));
}

const bf16* HostProblem::kv_row(int batch_index, int token) const {
  return &kv_cache[kv_row_offset(*this, batch_index, token)];
}

bf16* HostProblem::kv_row(int batch_index, int token) {
  return &kv_cache[kv_row_offset(*this, batch_index, token)];
}

int HostProblem::max_seq_len() const {
  return seq_lens.empty() ? 0 : *std::max_element(seq_lens.begin(), seq_lens.end());
}

HostProblem make_problem(const ProblemSpec& spec) {
  check_spec(spec);
  Random random(spec.seed);
  HostProblem problem{.spec = spec, .dims = dims_of(spec.layout)};
  const int d_qk = problem.dims.d_qk;
  const auto batch = static_cast<std::size_t>(spec.batch);
  const auto heads = static_cast<std::size_t>(spec.num_heads);

  std::vector<int> pages_of(batch);
  int used_pages = 0;
  problem.max_pages_per_seq = 1;
  for (std::size_t b = 0; b < batch; ++b) {
    pages_of[b] = ceil_div(spec.seq_lens[b], spec.page_size);
    used_pages += pages_of[b];
    problem.max_pages_per_seq = std::max(problem.max_pages_per_seq, pages_of[b]);
  }
  problem.num_pages = used_pages + kSparePages;

  // Sequence b takes the next pages_of[b] pages of the pool, which is shuffled when pages are
  // permuted; whatever is left over is spare.
  std::vector<std::int32_t> pool(problem.num_pages);
  for (int page = 0; page < problem.num_pages; ++page) pool[page] = page;
  if (spec.permute_pages) random.shuffle(pool);

  const auto table_stride = static_cast<std::size_t>(problem.max_pages_per_seq);
  problem.page_table.resize(batch * table_stride);
  for (std::size_t b = 0, next_page = 0; b < batch; ++b) {
    for (int page = 0; page < problem.max_pages_per_seq; ++page) {
      const bool beyond_cache = (static_cast<int>(b) + page) % 2 == 0;
      const std::int32_t garbage =
          beyond_cache ? problem.num_pages + kPastEndBeyondCache : kPastEndNegative;
      problem.page_table[b * table_stride + page] =
          page < pages_of[b] ? pool[next_page++] : garbage;
    }
  }
  problem.seq_lens.assign(spec.seq_lens.begin(), spec.seq_lens.end());

  problem.q.resize(batch * heads * d_qk);
  for (bf16& value : problem.q) value = random.input_value();

  // Every row starts as NaN; then the rows of real tokens get data, so rows past a sequence's
  // end (in its last page, and in spare pages) stay NaN.
  problem.kv_cache.assign(static_cast<std::size_t>(problem.num_pages) * spec.page_size * d_qk,
                          kCacheNaN);
  for (int b = 0; b < spec.batch; ++b) {
    for (int token = 0; token < spec.seq_lens[b]; ++token) {
      bf16* row = problem.kv_row(b, token);
      for (int d = 0; d < d_qk; ++d) row[d] = random.input_value();
    }
  }

  if (spec.with_sinks) {
    const double centre = std::log(std::max(problem.max_seq_len(), 1));
    problem.sinks.resize(heads);
    for (float& sink : problem.sinks) {
      sink = static_cast<float>(centre + random.uniform(-kSinkSpread, kSinkSpread));
    }
  }

  problem.out.resize(batch * heads * problem.dims.d_v);
  problem.lse.resize(batch * heads);
  problem.poison_outputs();
  return problem;
}

ProblemSpec lab_problem_spec(Layout layout, int num_heads, int page_size,
                             std::vector<int> seq_lens, std::uint64_t seed) {
  return ProblemSpec{.layout = layout,
                     .batch = static_cast<int>(seq_lens.size()),
                     .num_heads = num_heads,
                     .seq_lens = std::move(seq_lens),
                     .page_size = page_size,
                     .with_sinks = false,
                     .permute_pages = true,
                     .seed = seed};
}

std::vector<int> uniform_lengths(int batch, int len) {
  if (batch < 0 || len < 0) {
    throw std::invalid_argument("uniform_lengths: batch and len must be >= 0");
  }
  return std::vector<int>(batch, len);
}

std::vector<int> uniform_random_lengths(int count, int min_len, int max_len, std::uint64_t seed) {
  if (count < 0 || min_len < 1 || min_len > max_len) {
    throw std::invalid_argument("uniform_random_lengths: need count ≥ 0 and 1 ≤ min ≤ max");
  }
  std::mt19937_64 generator(seed);
  // An integer in [0, span) by rejection: draws below 2^64 mod span would favour small values,
  // so they are drawn again.
  const std::uint64_t span =
      static_cast<std::uint64_t>(max_len) - static_cast<std::uint64_t>(min_len) + 1;
  const std::uint64_t rejected_below = (0 - span) % span;
  std::vector<int> lengths;
  lengths.reserve(count);
  for (int i = 0; i < count; ++i) {
    std::uint64_t draw = generator();
    while (draw < rejected_below) draw = generator();
    lengths.push_back(min_len + static_cast<int>(draw % span));
  }
  return lengths;
}

std::vector<int> mixed_lengths(int batch, int max_len, std::uint64_t seed) {
  if (batch < 0 || max_len < 0) {
    throw std::invalid_argument("mixed_lengths: batch and max_len must be >= 0");
  }
  Random random(seed);
  std::vector<int> lengths;
  for (const int edge : {max_len, 0, 1}) {
    const bool fits = static_cast<int>(lengths.size()) < batch && edge <= max_len;
    if (fits && std::find(lengths.begin(), lengths.end(), edge) == lengths.end()) {
      lengths.push_back(edge);
    }
  }
  while (static_cast<int>(lengths.size()) < batch) {
    lengths.push_back(static_cast<int>(random.below(static_cast<std::uint64_t>(max_len) + 1)));
  }
  random.shuffle(lengths);
  return lengths;
}

}  // namespace mlalab::bench
