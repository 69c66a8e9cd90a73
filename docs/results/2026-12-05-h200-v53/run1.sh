#!/bin/bash
# Version 53 measured in one call. Built here from a worktree of main with
# head-block-pairs.patch applied:
#   MLALAB_VARIANTS='^(h16_t16_w4_s2|wgmma_h64_t64_w8_s2|wgmma_h64_t32_w8_s4|wgmma_h16_t64_w4_s2)$' \
#     MLALAB_CUDA_ARCHS=90a bash scripts/build.sh build-v53
#   bash scripts/pack_build.sh build-v53 build-d/v53.txz
# and called with carry ["build-d/v50.txz", "build-d/v53.txz"] (v50: main's kernels, the same
# four variants). The 64-token variant's GPU sweep under the new launch, the lab, then memcheck
# on a subset. Writes $OUT/v53.tar.gz; no step starts after MLALAB_STOP_AT.
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 300 ))}"
for b in v50 v53; do
  [ -x build-$b/bin/mlalab ] && continue
  mkdir -p build-$b && tar -xJf build-d/$b.txz -C build-$b || exit 1
done
R=docs/results/2026-12-05-h200-v53
out=/tmp/mlalab-session/v53
mkdir -p "$out"
archive="$OUT/v53.tar.gz"
source scripts/session_steps.sh  # step NAME CMD...: bounded by MLALAB_STOP_AT, packed
step info bash -c "date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv"
step ab_h128 build-v53/bin/mlalab ab $R/head-block-pairs-h128.toml --out "$out/ab"
step sweep_v53 env MLALAB_TEST_VARIANTS='^wgmma_h64_t64' build-v53/tests/mlalab_gpu_tests \
  --gtest_filter='Layouts/DecodeSweep.*'
step memcheck_v53 env MLALAB_TEST_VARIANTS='^wgmma_h64_t64' \
  MLALAB_TEST_CASES='^(b3_h128_long_p64|b1_h128_4097_p1|b97_h128_len64_p64)$' \
  compute-sanitizer --tool memcheck --error-exitcode 1 build-v53/tests/mlalab_gpu_tests \
  --gtest_filter='Layouts/DecodeSweep.*'
pack
