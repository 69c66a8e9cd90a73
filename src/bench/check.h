#pragma once
// Compares a backend's outputs with the fp64 reference (kernels/reference/reference.h).
//
// Errors are measured per (batch entry, head) row:
//   out error = max_d |out[d] - ref[d]| / max(max_d |ref[d]|, kOutErrorFloor)
//               (relative to the row's largest reference value: bf16 output rounding is
//               relative, and single near-zero elements must not dominate)
//   lse error = |lse - ref| / max(|ref|, 1)
//               (relative for large lse, absolute below 1, where lse crosses zero)
// A row passes when out error ≤ out_tol and lse error ≤ lse_tol, except that:
//   - a row whose reference is exactly 0 (an empty sequence) passes only if out is exactly 0,
//     and a reference lse of -inf only if lse is exactly -inf;
//   - any NaN fails: an element still holding the poison pattern (problem.h) counts as
//     unwritten, any other NaN counts as a NaN; a NaN reference (NaN inputs, or a batch entry
//     the reference did not compute) fails the row too.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "bench/problem.h"
#include "kernels/reference/reference.h"

namespace mlalab::bench {

constexpr int kMaxCheckedEntries = 8;  // sequences checked against the fp64 reference

// The batch entries checked against the reference: empty (= all) when batch ≤
// kMaxCheckedEntries, else kMaxCheckedEntries evenly spaced entries from first to last.
std::vector<int> validation_batch_indices(int batch);

constexpr double kOutErrorFloor = 1e-6;
constexpr double kDefaultOutTolerance = 1e-2;
constexpr double kDefaultLseTolerance = 1e-3;

struct CheckResult {
  double max_rel_err_out = 0.0;  // over the checked rows, NaN and unwritten elements aside
  double max_rel_err_lse = 0.0;
  std::int64_t nan_count = 0;        // NaNs in out and lse other than the poison pattern
  std::int64_t unwritten_count = 0;  // elements of out and lse still holding the poison pattern
  bool passed = true;
  std::string first_failure;  // the first failing row: where and what; empty if passed
};

// Checks `out` ([batch, num_heads, d_v]) and `lse` ([batch, num_heads]), laid out like
// problem.out and problem.lse, against `ref`: every batch entry, or only `batch_indices` when
// it is non-empty (the reference must have computed those). Throws std::invalid_argument when
// a size does not match the problem, std::out_of_range for a batch index outside [0, batch).
// A failed check as one line: the first failing row and the largest errors; nullopt if it
// passed.
std::optional<std::string> failure_text(const CheckResult& check);

CheckResult check_against_reference(const HostProblem& problem, std::span<const bf16> out,
                                    std::span<const float> lse, const kernels::ReferenceResult& ref,
                                    std::span<const int> batch_indices = {},
                                    double out_tol = kDefaultOutTolerance,
                                    double lse_tol = kDefaultLseTolerance);

}  // namespace mlalab::bench
