#!/bin/bash
# Versions 51 and 52 measured in one call (written in session 34, which got no device). Built
# here, each in a worktree of main with its patches applied (50: ../2026-12-05-h200-v50/
# take-after-issue.patch; 51: and ../2026-12-05-h200-v51/rest-first.patch; 52: and
# copy-streams.patch from this folder):
#   MLALAB_VARIANTS='^(h16_t16_w4_s2|wgmma_h64_t64_w8_s2|wgmma_h64_t32_w8_s4|wgmma_h16_t64_w4_s2)$' \
#     MLALAB_CUDA_ARCHS=90a bash scripts/build.sh build-v5X
#   bash scripts/pack_build.sh build-v5X build-d/v5X.txz
# and call with carry ["build-d/v50.txz", "build-d/v51.txz", "build-d/v52.txz"] (with the
# working tree, under the 64 MiB a call carries). The wgmma variants' GPU sweep of 52 (its copy
# warpgroup serves every wgmma kernel) and of 51's 64-token variant, the three labs (50 the
# baseline, 51 and 52 the variants), then 52 under memcheck, synccheck and racecheck (the
# swapped kernel). Writes $OUT/v52.tar.gz; no step starts after MLALAB_STOP_AT.
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 400 ))}"
for b in v50 v51 v52; do
  [ -x build-$b/bin/mlalab ] && continue
  mkdir -p build-$b && tar -xJf build-d/$b.txz -C build-$b || exit 1
done
R=docs/results/2026-12-05-h200-v52
out=/tmp/mlalab-session/v52
mkdir -p "$out"
archive="$OUT/v52.tar.gz"
source scripts/session_steps.sh  # step NAME CMD...: bounded by MLALAB_STOP_AT, packed
step info bash -c "date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv"
step sweep_v52 env MLALAB_TEST_VARIANTS='^wgmma_' build-v52/tests/mlalab_gpu_tests \
  --gtest_filter='Layouts/DecodeSweep.*:DecodeValidation.*'
step sweep_v51 env MLALAB_TEST_VARIANTS='^wgmma_h64_t64' build-v51/tests/mlalab_gpu_tests \
  --gtest_filter='Layouts/DecodeSweep.*'
for lab in candidates-h128 candidates-h16 candidates-page1 candidates-swapped; do
  step "ab_$lab" build-v52/bin/mlalab ab $R/$lab.toml --out "$out/ab"
done
small='^(one_token_b1_h1_p1|b3_h64_p64|b3_h17_p16|mixed_b97_h17_p1)$'
step memcheck_v52 env MLALAB_TEST_VARIANTS='^wgmma_' \
  MLALAB_TEST_CASES='^(b3_h64_p64|b3_h16_p128|b3_h17_p16|one_long_among_short_b9_h128_p64|b1_h128_4097_p1|mixed_b97_h17_p1|all_empty_b4_h16_p64)$' \
  compute-sanitizer --tool memcheck --error-exitcode 1 build-v52/tests/mlalab_gpu_tests \
  --gtest_filter='Layouts/DecodeSweep.*'
step synccheck_v52 env MLALAB_TEST_VARIANTS='^wgmma_h64_' MLALAB_TEST_CASES="$small" \
  compute-sanitizer --tool synccheck --error-exitcode 1 build-v52/tests/mlalab_gpu_tests \
  --gtest_filter='Layouts/DecodeSweep.*'
step racecheck_v52_swapped env MLALAB_TEST_VARIANTS='^wgmma_h16_t64_w4_s2$' MLALAB_TEST_CASES="$small" \
  compute-sanitizer --tool racecheck --error-exitcode 1 build-v52/tests/mlalab_gpu_tests \
  --gtest_filter='Layouts/DecodeSweep.*'
pack
