#!/bin/bash
# Version 57 (head-pairs-multicast.patch on a502585): a head pair's two CTAs as a cluster whose
# copy issuers multicast each KV tile into both. The GPU sweep, the lab against main at 128
# heads, each build's clocks and power under ~7 s of 128 heads, batch 64 (sustained_clocks),
# then memcheck and synccheck on 128-head cases.
# Built here: (a worktree of a502585 with head-pairs-multicast.patch applied)
#   MLALAB_VARIANTS='^(wgmma_h64_t64_w8_s2|wgmma_h16_t64_w4_s2)$' MLALAB_CUDA_ARCHS=90a \
#     bash scripts/build.sh build-v57
#   bash scripts/pack_build.sh build-v57 build-d/v57.txz
# Call with carry ["build-d/main2.txz", "build-d/v57.txz"]. Writes $OUT/v57.tar.gz.
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 540 ))}"
R=docs/results/2026-12-06-multicast
source scripts/session_steps.sh  # step NAME CMD...: bounded by MLALAB_STOP_AT, packed
session_folder v57
unpack_builds main2 v57 || exit 1
info_step
cases='^(b3_h128_long_p64|b1_h128_4097_p1|b97_h128_len64_p64|one_long_among_short_b9_h128_p64)$'
# Each step also bounded on its own: a pair that deadlocks must not take the whole call.
step sweep_v57 timeout 150 build-v57/tests/mlalab_gpu_tests --gtest_filter='Layouts/DecodeSweep.*'
step ab_h128 timeout 200 build-v57/bin/mlalab ab $R/multicast-h128.toml --out "$out/ab-h128"
sustained_clocks build-main2 sustained_main
sustained_clocks build-v57 sustained_v57
step memcheck_v57 env MLALAB_TEST_CASES="$cases" MLALAB_TEST_VARIANTS='^wgmma_h64' \
  timeout 180 compute-sanitizer --tool memcheck --error-exitcode 1 \
  build-v57/tests/mlalab_gpu_tests --gtest_filter='Layouts/DecodeSweep.*'
step synccheck_v57 env MLALAB_TEST_CASES='^b3_h128_long_p64$' MLALAB_TEST_VARIANTS='^wgmma_h64' \
  timeout 100 compute-sanitizer --tool synccheck --error-exitcode 1 \
  build-v57/tests/mlalab_gpu_tests --gtest_filter='Layouts/DecodeSweep.*'
exit $status
