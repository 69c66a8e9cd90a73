#include "core/validate.h"

#include <fmt/format.h>

#include <cmath>
#include <initializer_list>
#include <limits>
#include <string_view>

#include "core/layout.h"

namespace mlalab {
namespace {

// Rows are moved in 16-byte chunks of 8 bf16, so every row start must stay 16-byte aligned:
// a 16-byte aligned base plus strides that are whole chunks.
constexpr std::int64_t kStrideMultiple = 8;
constexpr std::uintptr_t kPointerAlignment = 16;

// Byte offsets are computed in int64. Capping every tensor's span at 2^62 bytes leaves
// headroom for sums of two offsets (base + row + column) without overflow.
constexpr std::int64_t kMaxTensorBytes = std::int64_t{1} << 62;

// Token indices and split boundaries are int32 in the kernels. Capping the tokens a page-table
// row can address at 2^30 leaves headroom for rounding up to whole tiles and splits.
constexpr std::int64_t kMaxTokensPerSequence = std::int64_t{1} << 30;

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();

// a · b for non-negative operands, saturating at the int64 maximum so that an absurd stride is
// reported as too large rather than wrapping into a small number.
std::int64_t saturating_mul(std::int64_t a, std::int64_t b) {
  if (a != 0 && b > kInt64Max / a) return kInt64Max;
  return a * b;
}

std::int64_t saturating_add(std::int64_t a, std::int64_t b) {
  if (b > kInt64Max - a) return kInt64Max;
  return a + b;
}

InputError make_error(std::string field, const auto& value, std::string allowed) {
  return InputError{.field = std::move(field), .value = fmt::format("{}", value),
                    .allowed = std::move(allowed)};
}

std::optional<InputError> check_range(std::string_view field, std::int64_t value,
                                      std::int64_t low, std::int64_t high) {
  if (value >= low && value <= high) return std::nullopt;
  return make_error(std::string(field), value, fmt::format("[{}, {}]", low, high));
}

std::optional<InputError> check_non_null(std::string_view field, const void* pointer) {
  if (pointer != nullptr) return std::nullopt;
  return make_error(std::string(field), "nullptr", "a non-null pointer");
}

std::optional<InputError> check_aligned(std::string_view field, const void* pointer) {
  const auto address = reinterpret_cast<std::uintptr_t>(pointer);
  if (address % kPointerAlignment == 0) return std::nullopt;
  return make_error(std::string(field), fmt::format("{:#x}", address),
                    fmt::format("an address that is a multiple of {} bytes", kPointerAlignment));
}

// A stride must leave room for what it steps over (`minimum`, explained by `minimum_source`)
// and, when `multiple` > 1, keep row starts aligned.
std::optional<InputError> check_stride(std::string_view field, std::int64_t stride,
                                       std::int64_t minimum, std::string_view minimum_source,
                                       std::int64_t multiple) {
  if (stride >= minimum && stride % multiple == 0) return std::nullopt;
  std::string allowed = fmt::format(">= {} ({})", minimum, minimum_source);
  if (multiple > 1) allowed += fmt::format(" and a multiple of {}", multiple);
  return make_error(std::string(field), stride, std::move(allowed));
}

// The bytes a strided tensor spans: from its first element to one past its last.
// `dimensions` are the outer dimensions (count and stride); `row_elems` is the contiguous
// innermost run.
struct Dimension {
  std::int64_t count;
  std::int64_t stride;
};

std::int64_t span_bytes(std::initializer_list<Dimension> dimensions, std::int64_t row_elems,
                        std::int64_t element_bytes) {
  std::int64_t last_element = row_elems;
  for (const auto& dimension : dimensions) {
    const std::int64_t outer = saturating_mul(dimension.count - 1, dimension.stride);
    last_element = saturating_add(last_element, outer);
  }
  return saturating_mul(last_element, element_bytes);
}

std::optional<InputError> check_span(std::string_view tensor, std::int64_t bytes,
                                     std::string_view spanned_by) {
  if (bytes <= kMaxTensorBytes) return std::nullopt;
  return make_error(std::string(tensor), fmt::format("{} bytes spanned by {}", bytes, spanned_by),
                    fmt::format("at most {} bytes (2^62)", kMaxTensorBytes));
}

// Runs the checks in order and returns the first error.
template <typename... Checks>
std::optional<InputError> first_error(Checks&&... checks) {
  std::optional<InputError> error;
  ((error = checks()) || ...);
  return error;
}

std::optional<InputError> validate_sizes(const DecodeParams& p) {
  const int allowed_d_qk_v3 = dims_of(Layout::kV3).d_qk;
  const int allowed_d_qk_v4 = dims_of(Layout::kV4).d_qk;
  const std::int64_t max_pages_allowed =
      p.page_size >= 1 && p.page_size <= kMaxPageSize ? kMaxTokensPerSequence / p.page_size : 1;
  return first_error(
      [&] { return check_range("batch", p.batch, 1, kMaxBatch); },
      [&] { return check_range("num_heads", p.num_heads, 1, kMaxHeads); },
      [&]() -> std::optional<InputError> {
        if (p.d_qk == allowed_d_qk_v3 || p.d_qk == allowed_d_qk_v4) return std::nullopt;
        return make_error("d_qk", p.d_qk,
                          fmt::format("{} (layout v3) or {} (layout v4)", allowed_d_qk_v3,
                                      allowed_d_qk_v4));
      },
      [&]() -> std::optional<InputError> {
        if (p.d_v == kDv) return std::nullopt;
        return make_error("d_v", p.d_v, fmt::format("{} (both layouts)", kDv));
      },
      [&]() -> std::optional<InputError> {
        const bool power_of_two = p.page_size > 0 && (p.page_size & (p.page_size - 1)) == 0;
        if (power_of_two && p.page_size <= kMaxPageSize) return std::nullopt;
        return make_error("page_size", p.page_size,
                          fmt::format("a power of two in [1, {}]", kMaxPageSize));
      },
      [&] { return check_range("num_pages", p.num_pages, 1, std::numeric_limits<int>::max()); },
      [&]() -> std::optional<InputError> {
        if (p.max_pages_per_seq >= 1 && p.max_pages_per_seq <= max_pages_allowed) {
          return std::nullopt;
        }
        return make_error("max_pages_per_seq", p.max_pages_per_seq,
                          fmt::format("[1, {}] (at most 2^30 tokens per sequence at page_size {})",
                                      max_pages_allowed, p.page_size));
      },
      [&]() -> std::optional<InputError> {
        if (std::isfinite(p.softmax_scale) && p.softmax_scale > 0.0f) return std::nullopt;
        return make_error("softmax_scale", p.softmax_scale, "finite and > 0");
      });
}

std::optional<InputError> validate_pointers(const DecodeParams& p) {
  return first_error(
      [&] { return check_non_null("q", p.q); },
      [&] { return check_non_null("kv_cache", p.kv_cache); },
      [&] { return check_non_null("page_table", p.page_table); },
      [&] { return check_non_null("seq_lens", p.seq_lens); },
      [&] { return check_non_null("out", p.out); },
      [&] { return check_non_null("lse", p.lse); },
      [&] { return check_aligned("q", p.q); },
      [&] { return check_aligned("kv_cache", p.kv_cache); },
      [&] { return check_aligned("page_table", p.page_table); },
      [&] { return check_aligned("seq_lens", p.seq_lens); },
      [&] { return check_aligned("sink_logits", p.sink_logits); },  // nullptr is aligned
      [&] { return check_aligned("out", p.out); },
      [&] { return check_aligned("lse", p.lse); });
}

std::optional<InputError> validate_strides(const DecodeParams& p) {
  constexpr std::int64_t kAnyMultiple = 1;
  return first_error(
      [&] {
        return check_stride("q_head_stride", p.q_head_stride, p.d_qk, "d_qk", kStrideMultiple);
      },
      [&] {
        return check_stride("q_batch_stride", p.q_batch_stride,
                            saturating_mul(p.num_heads, p.q_head_stride),
                            "num_heads · q_head_stride", kStrideMultiple);
      },
      [&] {
        return check_stride("kv_row_stride", p.kv_row_stride, p.d_qk, "d_qk", kStrideMultiple);
      },
      [&] {
        return check_stride("kv_page_stride", p.kv_page_stride,
                            saturating_mul(p.page_size, p.kv_row_stride),
                            "page_size · kv_row_stride", kStrideMultiple);
      },
      // Page-table rows are read one int32 at a time, so their stride needs no alignment.
      [&] {
        return check_stride("page_table_stride", p.page_table_stride, p.max_pages_per_seq,
                            "max_pages_per_seq", kAnyMultiple);
      },
      [&] {
        return check_stride("out_head_stride", p.out_head_stride, p.d_v, "d_v", kStrideMultiple);
      },
      [&] {
        return check_stride("out_batch_stride", p.out_batch_stride,
                            saturating_mul(p.num_heads, p.out_head_stride),
                            "num_heads · out_head_stride", kStrideMultiple);
      });
}

std::optional<InputError> validate_spans(const DecodeParams& p) {
  constexpr std::int64_t kBf16Bytes = sizeof(bf16);
  constexpr std::int64_t kInt32Bytes = sizeof(std::int32_t);
  return first_error(
      [&] {
        const std::int64_t bytes = span_bytes(
            {{p.batch, p.q_batch_stride}, {p.num_heads, p.q_head_stride}}, p.d_qk, kBf16Bytes);
        return check_span("q", bytes, "batch, num_heads and the q strides");
      },
      [&] {
        const std::int64_t bytes = span_bytes(
            {{p.num_pages, p.kv_page_stride}, {p.page_size, p.kv_row_stride}}, p.d_qk, kBf16Bytes);
        return check_span("kv_cache", bytes, "num_pages, page_size and the kv strides");
      },
      [&] {
        const std::int64_t bytes =
            span_bytes({{p.batch, p.page_table_stride}}, p.max_pages_per_seq, kInt32Bytes);
        return check_span("page_table", bytes, "batch and page_table_stride");
      },
      [&] {
        const std::int64_t bytes = span_bytes(
            {{p.batch, p.out_batch_stride}, {p.num_heads, p.out_head_stride}}, p.d_v, kBf16Bytes);
        return check_span("out", bytes, "batch, num_heads and the out strides");
      });
}

}  // namespace

std::string InputError::message() const { return field + " = " + value + ": allowed " + allowed; }

std::optional<InputError> validate_shapes(const DecodeParams& params) {
  // Sizes first: the stride minimums and spans are computed from them.
  return first_error([&] { return validate_sizes(params); },
                     [&] { return validate_pointers(params); },
                     [&] { return validate_strides(params); },
                     [&] { return validate_spans(params); });
}

std::optional<InputError> validate_tables(const DecodeParams& params,
                                          const std::int32_t* page_table_host,
                                          const std::int32_t* seq_lens_host) {
  // The tables are read through the sizes and strides, so those must be sound first.
  if (auto error = validate_shapes(params)) return error;
  if (auto error = check_non_null("page_table (host copy)", page_table_host)) return error;
  if (auto error = check_non_null("seq_lens (host copy)", seq_lens_host)) return error;

  const std::int64_t capacity =
      static_cast<std::int64_t>(params.max_pages_per_seq) * params.page_size;
  for (int b = 0; b < params.batch; ++b) {
    const std::int32_t seq_len = seq_lens_host[b];
    if (seq_len < 0 || seq_len > capacity) {
      return make_error(fmt::format("seq_lens[{}]", b), seq_len,
                        fmt::format("[0, {}] (max_pages_per_seq · page_size)", capacity));
    }
    const std::int32_t* row = page_table_host + b * params.page_table_stride;
    const int pages_used = (seq_len + params.page_size - 1) / params.page_size;
    for (int page = 0; page < pages_used; ++page) {
      if (row[page] < 0 || row[page] >= params.num_pages) {
        return make_error(fmt::format("page_table[{}][{}]", b, page), row[page],
                          fmt::format("[0, {}) (num_pages)", params.num_pages));
      }
    }
  }
  return std::nullopt;
}

}  // namespace mlalab
