#pragma once
// Host-side validation of a DecodeParams, run before any launch. Every error names the
// field, the offending value and the allowed range, so a user can fix the call without
// reading kernel code.
#include <cstdint>
#include <optional>
#include <string>

#include "core/decode_params.h"

namespace mlalab {

struct InputError {
  std::string field;    // e.g. "page_table[3][7]"
  std::string value;    // e.g. "-1"
  std::string allowed;  // e.g. "[0, 4096)"
  std::string message() const;  // "page_table[3][7] = -1: allowed [0, 4096)"
};

// Limits of the API (every backend accepts exactly this).
constexpr int kMaxHeads = 128;
constexpr int kMaxBatch = 1 << 16;
constexpr int kMaxPageSize = 128;

// Sizes, layout, strides and alignment; reads no tensor data, so it is safe on device pointers.
// Checks: batch in [1, kMaxBatch]; num_heads in [1, kMaxHeads]; (d_qk, d_v) one of the two
// layouts; page_size a power of two in [1, kMaxPageSize]; num_pages ≥ 1; max_pages_per_seq ≥ 1;
// softmax_scale finite and > 0; required pointers non-null; strides large enough for the
// shapes and multiples of 8 elements; tensor pointers 16-byte aligned (the kernels load rows
// in 16-byte chunks).
std::optional<InputError> validate_shapes(const DecodeParams& params);

// The table contents, given host copies of page_table and seq_lens laid out as described in
// params (page_table_stride): every seq_len in [0, max_pages_per_seq · page_size], and every
// page-table entry that a sequence uses (the first ceil(seq_len / page_size) of its row) in
// [0, num_pages). Entries past a sequence's last page are never read and are not checked.
std::optional<InputError> validate_tables(const DecodeParams& params,
                                          const std::int32_t* page_table_host,
                                          const std::int32_t* seq_lens_host);

}  // namespace mlalab
