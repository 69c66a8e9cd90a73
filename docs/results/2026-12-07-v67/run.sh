#!/bin/bash
# Version 67's device call (any Hopper; the decision wants the H200), carry
# ["build-d/v67.txz", "build-d/headbin.txz"]: v67 = the change's full sm_90a build with tests
# (`MLALAB_CUDA_ARCHS=90a bash scripts/build.sh build-v67`, then scripts/pack_build.sh),
# headbin = main's bin/mlalab (the labs' baseline arm, named as build-headbin). Correctness
# first: the decode sweep of the variants the change touches (every split policy: fixed:1 runs
# the swapped kernel's new unsplit form, fixed:2 the 64-head kernel's pairs), memcheck of the
# unsplit form and of the pairs, synccheck of the pairs (named barriers 11-13 are new); then
# the two labs, main against the change. Writes $OUT/v67.tar.gz. MLALAB_CALL_SECONDS (default
# 570) bounds the call.
source scripts/session_steps.sh
begin_call v67 v67 headbin || exit 1
touched='^(wgmma_h16_t64_w4_s2|wgmma_h16_t64_w4_s2_whole|wgmma_h64_t64_w8_s2|wgmma_h64_t32_w8_s4)$'
step gpu_tests timeout 150 env MLALAB_TEST_VARIANTS="$touched" build-v67/tests/mlalab_gpu_tests \
  --gtest_filter='Layouts/DecodeSweep.*:DecodeValidation.*:DispatcherCapture.*'
# Cases launched with fixed:1 and fixed:2 among their policies; 17 heads leave rows past the
# last head (a second head block of one head at 16 heads a CTA).
cases='^(b3_h64_p64|b3_h128_long_p64|b3_h17_p16)$'
step memcheck env MLALAB_TEST_VARIANTS='^(wgmma_h16_t64_w4_s2|wgmma_h64_t64_w8_s2)$' \
  MLALAB_TEST_CASES="$cases" timeout 100 compute-sanitizer --tool memcheck --error-exitcode 1 \
  build-v67/tests/mlalab_gpu_tests --gtest_filter='Layouts/DecodeSweep.*'
step synccheck env MLALAB_TEST_VARIANTS='^wgmma_h64_t32_w8_s4$' MLALAB_TEST_CASES="$cases" \
  timeout 80 compute-sanitizer --tool synccheck --error-exitcode 1 \
  build-v67/tests/mlalab_gpu_tests --gtest_filter='Layouts/DecodeSweep.*'
[ "$status" -eq 0 ] || exit 1
R=docs/results/2026-12-07-v67
step ab_h128 timeout 130 build-v67/bin/mlalab ab $R/h128.toml --out "$out/h128"
step ab_h16 timeout 130 build-v67/bin/mlalab ab $R/h16.toml --out "$out/h16"
exit $status
