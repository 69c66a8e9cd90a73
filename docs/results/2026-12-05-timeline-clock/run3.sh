#!/bin/bash
# Version 56 (page-first.patch on 50795f6): a part's first page-table reads before q's copy.
# The GPU sweep, the lab against main at 128 heads and at 16 heads (the swapped kernel, a
# control), memcheck on a subset.
# Built here: (a worktree of 50795f6 with page-first.patch applied)
#   MLALAB_VARIANTS='^(wgmma_h16_t64_w4_s2|wgmma_h64_t64_w8_s2)$' MLALAB_CUDA_ARCHS=90a \
#     bash scripts/build.sh build-v56
#   bash scripts/pack_build.sh build-v56 build-d/v56.txz
# Call with carry ["build-d/main2.txz", "build-d/v56.txz"]. Writes $OUT/v56.tar.gz.
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 420 ))}"
R=docs/results/2026-12-05-timeline-clock
source scripts/session_steps.sh  # step NAME CMD...: bounded by MLALAB_STOP_AT, packed
session_folder v56
unpack_builds main2 v56 || exit 1
info_step
step sweep_v56 build-v56/tests/mlalab_gpu_tests --gtest_filter='Layouts/DecodeSweep.*'
step ab_h128 build-v56/bin/mlalab ab $R/page-first-h128.toml --out "$out/ab-h128"
step ab_h16 build-v56/bin/mlalab ab $R/page-first-h16.toml --out "$out/ab-h16"
step memcheck_v56 env MLALAB_TEST_CASES='^(b3_h128_long_p64|b1_h128_4097_p1|b97_h128_len64_p64)$' \
  compute-sanitizer --tool memcheck --error-exitcode 1 build-v56/tests/mlalab_gpu_tests \
  --gtest_filter='Layouts/DecodeSweep.*'
exit $status
