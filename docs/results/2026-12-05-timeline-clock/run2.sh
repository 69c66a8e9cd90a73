#!/bin/bash
# Version 55 (swapped-pieces.patch, on top of version 54's q-issuer.patch): the swapped
# kernel's GPU sweep (both layouts), the lab against version 54 at 16 heads, memcheck and
# synccheck on a subset; first, what the combine costs at 16 heads, batch 1 and 8. Written in session 38, not yet run. Built here:
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
# What the combine costs at 16 heads (version 37's bound method): the same CTAs with the same
# tiles each, with partial rows and a combine (batch 8 at 16 splits, batch 1 at 32) and
# without (batch 128 at one split of 256 tokens, batch 32 at one split of 128): version 54's
# build, whose swapped kernel is main's but for q's issuer.
combine_bound() {
  local case batch context split
  for case in "8 4096 fixed:16" "128 256 fixed:1" "1 4096 fixed:32" "32 128 fixed:1"; do
    read -r batch context split <<< "$case"
    build-v54/bin/mlalab bench --heads 16 --batch "$batch" --context "$context" \
      --split "$split" --variant wgmma_h16_t64_w4_s2 || return 1
  done
}
export -f combine_bound  # steps run under timeout: a function goes through bash -c
step combine_bound bash -c combine_bound
step sweep_v55 build-v55/tests/mlalab_gpu_tests --gtest_filter='Layouts/DecodeSweep.*'
step ab_h16 build-v55/bin/mlalab ab $R/swapped-pieces-h16.toml --out "$out/ab-h16"
for tool in memcheck synccheck; do
  step ${tool}_v55 env MLALAB_TEST_CASES='^(b3_h16_p128|b3_h17_p16|b1_h17_4097_pages_in_order)$' \
    compute-sanitizer --tool $tool --error-exitcode 1 build-v55/tests/mlalab_gpu_tests \
    --gtest_filter='Layouts/DecodeSweep.*'
done
exit $status
