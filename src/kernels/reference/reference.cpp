#include "kernels/reference/reference.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <thread>

#include "core/layout.h"
#include "core/validate.h"

namespace mlalab::kernels {
namespace {

// Runs task(i) for every i in [0, count) on every host core. Items are handed out one at a
// time, so rows of very different lengths still balance.
template <typename Task>
void parallel_for(std::int64_t count, const Task& task) {
  if (count <= 0) return;
  const std::int64_t workers =
      std::clamp<std::int64_t>(std::thread::hardware_concurrency(), 1, count);
  std::atomic<std::int64_t> next_item{0};
  const auto work = [&] {
    for (std::int64_t item = next_item++; item < count; item = next_item++) task(item);
  };
  std::vector<std::jthread> helpers;
  for (std::int64_t worker = 1; worker < workers; ++worker) helpers.emplace_back(work);
  work();
}

// The cache row of token `token` of sequence `b`, through the page table.
const bf16* cache_row(const DecodeParams& p, int b, int token) {
  const std::int32_t page = p.page_table[b * p.page_table_stride + token / p.page_size];
  return p.kv_cache + page * p.kv_page_stride + (token % p.page_size) * p.kv_row_stride;
}

// q · k in double. Every product of two bf16 values is exact; the independent partial sums
// only change the order of the additions (irrelevant at fp64 precision) and spare the loop one
// long chain of dependent adds, which would make the oracle several times slower.
double dot(const double* q, const bf16* k, int n) {
  constexpr int kPartialSums = 8;
  static_assert(dims_of(Layout::kV3).d_qk % kPartialSums == 0 &&
                dims_of(Layout::kV4).d_qk % kPartialSums == 0);
  double partial[kPartialSums] = {};
  for (int d = 0; d < n; d += kPartialSums) {
    for (int i = 0; i < kPartialSums; ++i) partial[i] += q[d + i] * to_float(k[d + i]);
  }
  double sum = 0.0;
  for (const double value : partial) sum += value;
  return sum;
}

// out[b,h] and lse[b,h] by the documented formula, in two passes: every score first, then the
// weights exp(score - max) (the max only keeps exp in range; it cancels in the ratio).
void compute_row(const DecodeParams& p, int b, int h, double* out_row, double* lse) {
  const int seq_len = p.seq_lens[b];
  std::fill(out_row, out_row + p.d_v, 0.0);
  if (seq_len == 0) {
    *lse = -std::numeric_limits<double>::infinity();
    return;
  }

  const bf16* q = p.q + b * p.q_batch_stride + h * p.q_head_stride;
  std::vector<double> q_row(p.d_qk);
  for (int d = 0; d < p.d_qk; ++d) q_row[d] = to_float(q[d]);

  std::vector<double> scores(seq_len);
  for (int token = 0; token < seq_len; ++token) {
    scores[token] =
        static_cast<double>(p.softmax_scale) * dot(q_row.data(), cache_row(p, b, token), p.d_qk);
  }

  const double max_score = *std::max_element(scores.begin(), scores.end());
  double sum = 0.0;
  for (const double score : scores) sum += std::exp(score - max_score);
  *lse = max_score + std::log(sum);

  const double sink_weight =
      p.sink_logits != nullptr ? std::exp(static_cast<double>(p.sink_logits[h]) - max_score) : 0.0;
  const double denominator = sum + sink_weight;
  for (int token = 0; token < seq_len; ++token) {
    const double weight = std::exp(scores[token] - max_score) / denominator;
    const bf16* v = cache_row(p, b, token);
    for (int d = 0; d < p.d_v; ++d) out_row[d] += weight * to_float(v[d]);
  }
}

}  // namespace

ReferenceResult reference_decode(const DecodeParams& host_params,
                                 std::span<const int> batch_indices) {
  const DecodeParams& p = host_params;
  if (const auto error = validate_tables(p, p.page_table, p.seq_lens)) {
    throw std::invalid_argument("reference_decode: " + error->message());
  }

  std::vector<int> batches;
  if (batch_indices.empty()) {
    for (int b = 0; b < p.batch; ++b) batches.push_back(b);
  } else {
    for (const int b : batch_indices) {
      if (b < 0 || b >= p.batch) {
        throw std::out_of_range("reference_decode: batch index " + std::to_string(b) +
                                " outside [0, " + std::to_string(p.batch) + ")");
      }
    }
    // Each row is written by exactly one thread, so a repeated index must be computed once.
    batches.assign(batch_indices.begin(), batch_indices.end());
    std::sort(batches.begin(), batches.end());
    batches.erase(std::unique(batches.begin(), batches.end()), batches.end());
  }

  const std::int64_t rows = static_cast<std::int64_t>(p.batch) * p.num_heads;
  const double not_computed = std::numeric_limits<double>::quiet_NaN();
  ReferenceResult result{.out = std::vector<double>(rows * p.d_v, not_computed),
                         .lse = std::vector<double>(rows, not_computed)};

  const std::int64_t items = static_cast<std::int64_t>(batches.size()) * p.num_heads;
  parallel_for(items, [&](std::int64_t item) {
    const int b = batches[item / p.num_heads];
    const int h = static_cast<int>(item % p.num_heads);
    const std::int64_t row = static_cast<std::int64_t>(b) * p.num_heads + h;
    compute_row(p, b, h, &result.out[row * p.d_v], &result.lse[row]);
  });
  return result;
}

}  // namespace mlalab::kernels
