// Which calls the wgmma family's copies may take by TMA (kernels/wgmma/tensor_maps.h): the
// encoder must accept what the kernels rely on and refuse what a box cannot express, since a
// refusal silently leaves those copies to cp.async (correct, only slower).
#include <cuda.h>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

#include <cstdint>

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
    // Encoding reads no memory: any 16-byte-aligned address will do.
    params_.batch = 3;
    params_.num_heads = 16;
    params_.d_qk = 576;
    params_.d_v = 512;
    params_.page_size = 64;
    params_.num_pages = 12;
    params_.max_pages_per_seq = 4;
    set_contiguous_strides(params_);
    params_.q = reinterpret_cast<const bf16*>(std::uintptr_t{1} << 20);
    params_.kv_cache = reinterpret_cast<const bf16*>(std::uintptr_t{1} << 24);
  }
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
  EXPECT_TRUE(kernels::wgmma::encode_kv_tile_map(params_, 32, &map_));
  EXPECT_TRUE(kernels::wgmma::encode_kv_tile_map(params_, 64, &map_));
  params_.page_size = 16;
  EXPECT_FALSE(kernels::wgmma::encode_kv_tile_map(params_, 32, &map_));
}

TEST_F(WgmmaTensorMaps, StridesTmaCannotExpressAreRefused) {
  params_.q_head_stride = params_.d_qk + 4;  // 1,160 bytes: not a multiple of 16
  params_.q_batch_stride = 16 * params_.q_head_stride;
  EXPECT_FALSE(kernels::wgmma::encode_q_tile_map(params_, 64, &map_));
  params_.q = reinterpret_cast<const bf16*>((std::uintptr_t{1} << 20) + 8);
  params_.q_head_stride = params_.d_qk;
  params_.q_batch_stride = 16 * params_.d_qk;
  EXPECT_FALSE(kernels::wgmma::encode_q_tile_map(params_, 64, &map_));
}

}  // namespace
}  // namespace mlalab
