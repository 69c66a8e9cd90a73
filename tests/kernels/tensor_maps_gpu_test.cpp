// Which calls the wgmma family's copies may take by TMA (kernels/wgmma/tensor_maps.h): the
// encoder must accept what the kernels rely on and refuse what a box cannot express, since a
// refusal silently leaves those copies to cp.async (correct, only slower).
#include <cuda.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <optional>

#include "bench/cuda_raii.h"
#include "bench/require_gpu.h"
#include "core/decode_params.h"
#include "kernels/wgmma/tensor_maps.h"

namespace mlalab {
namespace {

class WgmmaTensorMaps : public ::testing::Test {
 protected:
  void SetUp() override {
    MLALAB_REQUIRE_COMPUTE_CAPABILITY(9, "a tensor map");
    ASSERT_NE(kernels::wgmma::tensor_map_encoder(), nullptr)
        << "the driver has no cuTensorMapEncodeTiled";
    params_.batch = 3;
    params_.num_heads = 16;
    params_.d_qk = 576;
    params_.d_v = 512;
    params_.page_size = 64;
    params_.num_pages = 12;
    params_.max_pages_per_seq = 4;
    set_contiguous_strides(params_);
    // Encoding reads no memory, but the driver encodes in the current context, which the
    // allocations create (a test run alone has no other).
    q_.emplace(static_cast<std::size_t>(params_.batch) * 17 * params_.d_qk);
    kv_cache_.emplace(static_cast<std::size_t>(params_.num_pages) * params_.page_size *
                      params_.d_qk);
    params_.q = q_->data();
    params_.kv_cache = kv_cache_->data();
  }
  std::optional<bench::DeviceBuffer<bf16>> q_, kv_cache_;  // 17 heads: the largest H below
  DecodeParams params_;
  CUtensorMap map_{};
};

TEST_F(WgmmaTensorMaps, QBlocksReachPastTheLastHead) {
  // 64 heads per CTA over 16 (H = 16) or 17 heads: the box is taller than the view.
  EXPECT_TRUE(kernels::wgmma::encode_q_tile_map(params_, 64, &map_));
  params_.num_heads = 17;
  params_.q_batch_stride = 17 * params_.d_qk;
  EXPECT_TRUE(kernels::wgmma::encode_q_tile_map(params_, 64, &map_));
}

TEST_F(WgmmaTensorMaps, KvTilesNeedPagesOfATile) {
  EXPECT_TRUE(kernels::wgmma::encode_kv_tile_map(params_, 32, 4, &map_));
  EXPECT_TRUE(kernels::wgmma::encode_kv_tile_map(params_, 64, 1, &map_));
  params_.page_size = 16;
  EXPECT_FALSE(kernels::wgmma::encode_kv_tile_map(params_, 32, 4, &map_));
}

TEST_F(WgmmaTensorMaps, StridesTmaCannotExpressAreRefused) {
  params_.q_head_stride = params_.d_qk + 4;  // 1,160 bytes: not a multiple of 16
  params_.q_batch_stride = 16 * params_.q_head_stride;
  EXPECT_FALSE(kernels::wgmma::encode_q_tile_map(params_, 64, &map_));
  params_.q = q_->data() + 4;  // 8 bytes past a 16-byte boundary
  params_.q_head_stride = params_.d_qk;
  params_.q_batch_stride = 16 * params_.d_qk;
  EXPECT_FALSE(kernels::wgmma::encode_q_tile_map(params_, 64, &map_));
}

}  // namespace
}  // namespace mlalab
