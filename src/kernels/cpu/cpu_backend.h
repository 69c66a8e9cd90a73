#pragma once
// The backend for machines without a GPU: the same call as the CUDA kernels (bf16 in, bf16 out
// and fp32 lse), computed on the host in fp32 with an online softmax. Every mlalab command
// falls back to it, so it is built for speed: each cache row is converted to fp32 once per
// batch entry and reused by all heads, and long sequences are split across threads (like
// split-KV on the GPU) and merged through their partial lse.
#include <optional>

#include "core/decode_params.h"
#include "core/validate.h"

namespace mlalab::kernels {

// Validates host_params (validate_shapes, then validate_tables on the same host pointers) and
// returns the first error without writing anything; otherwise writes out and lse and returns
// nullopt. num_threads = 0 uses every hardware thread.
std::optional<InputError> run_cpu_backend(const DecodeParams& host_params, int num_threads = 0);

}  // namespace mlalab::kernels
