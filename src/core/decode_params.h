#pragma once
// The problem: one MLA decode-attention call in absorbed form (one latent KV head shared by
// all query heads). Pointers are host pointers for the CPU backends and device pointers for
// the CUDA ones. Strides are in elements.
#include <cstdint>

#include "core/bf16.h"

namespace mlalab {

struct DecodeParams {
  const bf16* q = nullptr;              // [batch, num_heads, d_qk]
  const bf16* kv_cache = nullptr;       // [num_pages, page_size, d_qk]; row = latent ‖ rope
  const std::int32_t* page_table = nullptr;  // [batch, max_pages_per_seq]; entries past a
                                             // sequence's last page are never read
  const std::int32_t* seq_lens = nullptr;    // [batch]; 0 allowed
  const float* sink_logits = nullptr;   // [num_heads] or nullptr (no attention sink)
  bf16* out = nullptr;                  // [batch, num_heads, d_v]
  float* lse = nullptr;                 // [batch, num_heads], natural log of Σ exp(scaled score)

  int batch = 0;
  int num_heads = 0;
  int d_qk = 0;   // 576 (V3) or 512 (V4)
  int d_v = 0;    // 512 in both layouts
  int page_size = 0;        // power of two in [1, 128]
  int num_pages = 0;
  int max_pages_per_seq = 0;
  float softmax_scale = 0.0f;

  std::int64_t q_batch_stride = 0;    // elements between batch entries of q
  std::int64_t q_head_stride = 0;     // elements between heads of q
  std::int64_t kv_page_stride = 0;    // elements between pages of the cache
  std::int64_t kv_row_stride = 0;     // elements between token rows within a page
  std::int64_t page_table_stride = 0; // elements between rows of page_table
  std::int64_t out_batch_stride = 0;
  std::int64_t out_head_stride = 0;
};

// Semantics (every backend):
//   score[j] = softmax_scale · q[b,h,:] · kv_row(j)[:]           for j < seq_lens[b]
//   lse[b,h] = ln Σ_j exp(score[j])                               (-inf when seq_lens[b] == 0)
//   out[b,h] = Σ_j exp(score[j]) · V(j) / (Σ_j exp(score[j]) + exp(sink[h]))
// The sink, when present, only enlarges the denominator; lse covers the scores alone so that
// partial results stay mergeable. With seq_lens[b] == 0, out is 0 and lse is -inf.

// Strides of dense, contiguous tensors of the given shape.
inline void set_contiguous_strides(DecodeParams& params) {
  params.q_batch_stride = static_cast<std::int64_t>(params.num_heads) * params.d_qk;
  params.q_head_stride = params.d_qk;
  params.kv_row_stride = params.d_qk;
  params.kv_page_stride = static_cast<std::int64_t>(params.page_size) * params.d_qk;
  params.page_table_stride = params.max_pages_per_seq;
  params.out_batch_stride = static_cast<std::int64_t>(params.num_heads) * params.d_v;
  params.out_head_stride = params.d_v;
}

}  // namespace mlalab
