#pragma once
// q and the KV cache as tensor maps for the tensor memory accelerator (TMA): the wgmma family's
// copy warpgroup then moves a tile with a few instructions instead of 16-byte cp.async per
// thread (docs/perf-notes.md, versions 27, 28 and 43). Both views have four dimensions,
// innermost first: the 64 columns of a 128-byte span, rows (a page's tokens, or a sequence's
// heads), the row's spans, and the outermost index (pages, or sequences). A box, [64, tile
// rows, spans (q: all of them), 1], lands in shared memory as that part of traits.h's
// 128-byte-swizzled tile: span after span, rows 128 bytes apart, the 16-byte unit u of row r
// at u ^ (r % 8). The spans' stride (128 bytes) is below the rows', which the driver accepts
// (tests/kernels/tma_page_layout_gpu_test.cu checks the layout on the GPU). Rows past the
// view's end land as zeros, their bytes still counted.
#include <cuda.h>
#include <cudaTypedefs.h>

#include "core/decode_params.h"

namespace mlalab::kernels::wgmma {

// The driver's cuTensorMapEncodeTiled, found through the runtime (mlalab links no libcuda);
// nullptr where the driver has none.
PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder();

// Encodes the map of `params`' cache with boxes of `tile_rows` rows and `box_spans` spans
// (traits.h: a tile is copied as a few boxes, landing in two pieces). False, leaving every KV
// copy to cp.async, where a box cannot be a tile: a page shorter than the tile, strides or a
// base address that TMA cannot express, or no encoder.
bool encode_kv_tile_map(const DecodeParams& params, int tile_rows, int box_spans,
                        CUtensorMap* map);

// Encodes the map of `params`' q with boxes of `block_h` heads of one sequence (a block past
// the last head reads zeros there). False, leaving q to cp.async, where TMA cannot express the
// strides or the base address, or there is no encoder.
bool encode_q_tile_map(const DecodeParams& params, int block_h, CUtensorMap* map);

}  // namespace mlalab::kernels::wgmma
