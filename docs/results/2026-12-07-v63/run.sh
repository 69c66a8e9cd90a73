#!/bin/bash
# Version 63's device call (any Hopper card), carry ["build-d/v63.txz", "build-d/land60.txz"]
# (v63: scripts/pack_build.sh of `MLALAB_VARIANTS='^wgmma_h64_.*' MLALAB_CUDA_ARCHS=90a bash
# scripts/build.sh build-v63`, tests included; land60: main's build before it). The decode
# sweep of the 64-head variants (the split pairs among its cases), memcheck and synccheck of
# the pair cases, then the lab, old against new. Writes $OUT/v63.tar.gz.
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 400 ))}"
export MLALAB_STOP_AT
source scripts/session_steps.sh
session_folder v63
unpack_builds v63 land60 || exit 1
info_step
step configs build-v63/bin/mlalab configs
step gpu_tests timeout 150 build-v63/tests/mlalab_gpu_tests \
  --gtest_filter='Layouts/DecodeSweep.*:DecodeValidation.*:DispatcherCapture.*'
# Cases launched with every split policy, fixed:2 (a pair per sequence) among them; 17 heads
# leave rows past the last head.
cases='^(b3_h64_p64|b3_h128_long_p64|b3_h17_p16)$'
step memcheck env MLALAB_TEST_VARIANTS='^wgmma_h64_t64_w8_s2$' MLALAB_TEST_CASES="$cases" \
  timeout 100 compute-sanitizer --tool memcheck --error-exitcode 1 \
  build-v63/tests/mlalab_gpu_tests --gtest_filter='Layouts/DecodeSweep.*'
step synccheck env MLALAB_TEST_VARIANTS='^wgmma_h64_t32_w8_s2$' MLALAB_TEST_CASES="$cases" \
  timeout 100 compute-sanitizer --tool synccheck --error-exitcode 1 \
  build-v63/tests/mlalab_gpu_tests --gtest_filter='Layouts/DecodeSweep.*'
R=docs/results/2026-12-07-v63
for experiment in pairs-4k pairs-1k; do
  step "ab_$experiment" timeout 110 build-v63/bin/mlalab ab "$R/$experiment.toml" \
    --out "$out/$experiment"
done
exit $status
