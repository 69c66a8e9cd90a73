#pragma once
// bf16 storage type shared by host and device code. The kernels reinterpret it as
// __nv_bfloat16; host code (reference, CPU backend, data generators) converts with the
// functions below, so nothing outside src/kernels/portable needs a CUDA header.
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define MLALAB_HOST_DEVICE __host__ __device__
#else
#define MLALAB_HOST_DEVICE
#endif

namespace mlalab {

struct bf16 {
  std::uint16_t bits;
};
static_assert(sizeof(bf16) == 2);

MLALAB_HOST_DEVICE inline float to_float(bf16 value) {
  std::uint32_t widened = static_cast<std::uint32_t>(value.bits) << 16;
  float result;
  std::memcpy(&result, &widened, sizeof(result));
  return result;
}

// Round to nearest, ties to even; NaN stays NaN (quiet).
MLALAB_HOST_DEVICE inline bf16 to_bf16(float value) {
  std::uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  if ((bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0) {
    return bf16{static_cast<std::uint16_t>((bits >> 16) | 0x0040u)};
  }
  const std::uint32_t rounding_bias = 0x7fffu + ((bits >> 16) & 1u);
  return bf16{static_cast<std::uint16_t>((bits + rounding_bias) >> 16)};
}

}  // namespace mlalab
