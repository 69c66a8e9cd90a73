#pragma once
// The fp64 oracle that every backend is checked against. It follows the semantics documented
// in core/decode_params.h literally (all scores, their maximum, then the weighted sum), reads
// the bf16 inputs exactly and accumulates in double, so its own error is far below any
// backend's. Written to be obviously correct first, and fast enough second: it runs on all
// host cores so that benchmark-sized problems finish in seconds.
#include <span>
#include <vector>

#include "core/decode_params.h"

namespace mlalab::kernels {

struct ReferenceResult {
  std::vector<double> out;  // [batch, num_heads, d_v]; NaN for batch entries not computed
  std::vector<double> lse;  // [batch, num_heads]; -inf for empty sequences, NaN if not computed
};

// Computes out and lse for every batch entry, or only for `batch_indices` when it is non-empty
// (so that a benchmark can check a sample of a large batch). host_params must hold host
// pointers; its out and lse are not touched. Throws std::invalid_argument when the inputs fail
// validate_shapes or validate_tables, and std::out_of_range for a batch index outside
// [0, batch).
ReferenceResult reference_decode(const DecodeParams& host_params,
                                 std::span<const int> batch_indices = {});

}  // namespace mlalab::kernels
