#!/bin/bash
# Version 55 (swapped-pieces.patch, on top of version 54's q-issuer.patch): the swapped
# kernel's GPU sweep (both layouts), the lab against version 54 at 16 heads, memcheck and
# synccheck on a subset. Written in session 38, not yet run. Built here:
#   (a worktree of 50795f6 with q-issuer.patch and swapped-pieces.patch applied)
#   MLALAB_VARIANTS='^(wgmma_h16_t64_w4_s2)$' MLALAB_CUDA_ARCHS=90a bash scripts/build.sh build-v55
#   bash scripts/pack_build.sh build-v55 build-d/v55.txz
# Call with carry ["build-d/v54.txz", "build-d/v55.txz"]. Writes $OUT/v55.tar.gz; no step
# starts after MLALAB_STOP_AT.
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 480 ))}"
R=docs/results/2026-12-05-timeline-clock
source scripts/session_steps.sh  # step NAME CMD...: bounded by MLALAB_STOP_AT, packed
session_folder v55
unpack_builds v54 v55 || exit 1
info_step
step sweep_v55 build-v55/tests/mlalab_gpu_tests --gtest_filter='Layouts/DecodeSweep.*'
step ab_h16 build-v55/bin/mlalab ab $R/swapped-pieces-h16.toml --out "$out/ab-h16"
for tool in memcheck synccheck; do
  step ${tool}_v55 env MLALAB_TEST_CASES='^(b3_h16_p128|b3_h17_p16|b1_h17_4097_pages_in_order)$' \
    compute-sanitizer --tool $tool --error-exitcode 1 build-v55/tests/mlalab_gpu_tests \
    --gtest_filter='Layouts/DecodeSweep.*'
done
exit $status
