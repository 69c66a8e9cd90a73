#pragma once
// The two DeepSeek cache layouts. One paged cache row per token holds the compressed
// latent followed by the rope part; V is the first d_v columns of the same row.
#include <optional>
#include <string_view>

namespace mlalab {

enum class Layout { kV3, kV4 };

struct LayoutDims {
  int d_qk;      // latent + rope: the width of q and of one cache row
  int d_latent;
  int d_rope;
  int d_v;       // V = first d_v columns of the cache row
};

constexpr int kDv = 512;  // both layouts: the value head is the 512-wide latent prefix

constexpr LayoutDims dims_of(Layout layout) {
  return layout == Layout::kV3 ? LayoutDims{.d_qk = 576, .d_latent = 512, .d_rope = 64, .d_v = kDv}
                               : LayoutDims{.d_qk = 512, .d_latent = 448, .d_rope = 64, .d_v = kDv};
}

constexpr std::string_view name_of(Layout layout) { return layout == Layout::kV3 ? "v3" : "v4"; }

inline std::optional<Layout> parse_layout(std::string_view text) {
  if (text == "v3") return Layout::kV3;
  if (text == "v4") return Layout::kV4;
  return std::nullopt;
}

}  // namespace mlalab
