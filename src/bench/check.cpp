#include "bench/check.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <vector>

namespace mlalab::bench {

std::optional<std::string> failure_text(const CheckResult& check) {
  if (check.passed) return std::nullopt;
  return fmt::format("{} (max rel err out {:.3g}, lse {:.3g})", check.first_failure,
                     check.max_rel_err_out, check.max_rel_err_lse);
}

std::vector<int> validation_batch_indices(int batch) {
  if (batch <= kMaxCheckedEntries) return {};
  std::vector<int> indices(kMaxCheckedEntries);
  for (int i = 0; i < kMaxCheckedEntries; ++i) {
    indices[i] = static_cast<int>(static_cast<long long>(i) * (batch - 1) /
                                  (kMaxCheckedEntries - 1));
  }
  return indices;
}

namespace {

constexpr double kLseErrorFloor = 1.0;

struct RowVerdict {
  double out_error = 0.0;  // over the elements that are neither NaN nor unwritten
  double lse_error = 0.0;
  std::optional<std::string> failure;
};

// Checks one (batch entry, head) row and adds its NaN and unwritten elements to `result`.
RowVerdict check_row(std::span<const bf16> out, float lse, std::span<const double> ref_out,
                     double ref_lse, double out_tol, double lse_tol, CheckResult& result) {
  RowVerdict verdict;
  std::int64_t nans = 0;
  std::int64_t unwritten = 0;
  int first_bad = -1;  // first NaN or unwritten element
  int worst = 0;       // element with the largest difference
  double max_diff = 0.0;
  double max_ref = 0.0;
  for (std::size_t d = 0; d < out.size(); ++d) {
    const float value = to_float(out[d]);
    if (is_poison(out[d]) || std::isnan(value)) {
      (is_poison(out[d]) ? unwritten : nans) += 1;
      if (first_bad < 0) first_bad = static_cast<int>(d);
      continue;
    }
    const double diff = std::abs(static_cast<double>(value) - ref_out[d]);
    if (diff > max_diff) {
      max_diff = diff;
      worst = static_cast<int>(d);
    }
    max_ref = std::max(max_ref, std::abs(ref_out[d]));
  }
  result.nan_count += nans;
  result.unwritten_count += unwritten;
  verdict.out_error = max_diff / std::max(max_ref, kOutErrorFloor);

  const bool lse_unwritten = is_poison(lse);
  const bool lse_nan = !lse_unwritten && std::isnan(lse);
  result.unwritten_count += lse_unwritten ? 1 : 0;
  result.nan_count += lse_nan ? 1 : 0;
  const bool empty_sequence = std::isinf(ref_lse) && ref_lse < 0;
  if (!lse_unwritten && !lse_nan && !empty_sequence && !std::isnan(ref_lse)) {
    verdict.lse_error = std::abs(lse - ref_lse) / std::max(std::abs(ref_lse), kLseErrorFloor);
  }

  auto& failure = verdict.failure;
  if (std::isnan(ref_lse)) {
    failure = "the reference is NaN (NaN inputs, or a batch entry the reference did not compute)";
  } else if (unwritten + nans > 0) {
    failure = fmt::format("out[{}] is {} ({} of {} elements never written, {} NaN)", first_bad,
                          is_poison(out[first_bad]) ? "never written" : "NaN", unwritten,
                          out.size(), nans);
  } else if (max_ref == 0.0 && max_diff != 0.0) {
    failure = fmt::format("out[{}] = {} but the reference row is exactly 0 (empty sequence)", worst,
                          to_float(out[worst]));
  } else if (verdict.out_error > out_tol) {
    failure = fmt::format("out[{}] = {} but reference {:.6g} (row error {:.3g} > {:.3g})", worst,
                          to_float(out[worst]), ref_out[worst], verdict.out_error, out_tol);
  } else if (lse_unwritten || lse_nan) {
    failure = fmt::format("lse is {}", lse_unwritten ? "never written" : "NaN");
  } else if (empty_sequence && !(std::isinf(lse) && lse < 0)) {
    failure = fmt::format("lse = {} but the reference is -inf (empty sequence)", lse);
  } else if (verdict.lse_error > lse_tol) {
    failure = fmt::format("lse = {} but reference {:.9g} (error {:.3g} > {:.3g})", lse, ref_lse,
                          verdict.lse_error, lse_tol);
  }
  return verdict;
}

}  // namespace

CheckResult check_against_reference(const HostProblem& problem, std::span<const bf16> out,
                                    std::span<const float> lse, const kernels::ReferenceResult& ref,
                                    std::span<const int> batch_indices, double out_tol,
                                    double lse_tol) {
  const int batch = problem.spec.batch;
  const int heads = problem.spec.num_heads;
  const int d_v = problem.dims.d_v;
  const std::size_t rows = static_cast<std::size_t>(batch) * heads;
  if (out.size() != rows * d_v || ref.out.size() != rows * d_v || lse.size() != rows ||
      ref.lse.size() != rows) {
    throw std::invalid_argument(fmt::format(
        "check_against_reference: sizes out {}, lse {}, reference out {}, reference lse {} do "
        "not match the problem ({} rows of {})",
        out.size(), lse.size(), ref.out.size(), ref.lse.size(), rows, d_v));
  }

  std::vector<int> batches(batch_indices.begin(), batch_indices.end());
  if (batches.empty()) {
    for (int b = 0; b < batch; ++b) batches.push_back(b);
  }

  CheckResult result;
  for (const int b : batches) {
    if (b < 0 || b >= batch) {
      throw std::out_of_range(
          fmt::format("check_against_reference: batch index {} outside [0, {})", b, batch));
    }
    for (int h = 0; h < heads; ++h) {
      const std::size_t row = static_cast<std::size_t>(b) * heads + h;
      const RowVerdict verdict = check_row(out.subspan(row * d_v, d_v), lse[row],
                                           std::span(ref.out).subspan(row * d_v, d_v), ref.lse[row],
                                           out_tol, lse_tol, result);
      result.max_rel_err_out = std::max(result.max_rel_err_out, verdict.out_error);
      result.max_rel_err_lse = std::max(result.max_rel_err_lse, verdict.lse_error);
      if (verdict.failure && result.passed) {
        result.passed = false;
        result.first_failure =
            fmt::format("b={} h={} (seq_len {}): {}", b, h, problem.seq_lens[b], *verdict.failure);
      }
    }
  }
  return result;
}

}  // namespace mlalab::bench
