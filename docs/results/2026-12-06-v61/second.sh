#!/bin/bash
# Version 61's second device call (any Hopper), carry ["build-d/v61.txz"]: after the first call
# (h100-s47a/), the plan merges only where clusters take no more waves than the CTAs, and
# unmerged launches run the kernel without the merge. The GPU tests of the four 2-stage
# swapped variants (correctness of both kernels, resident clusters of every size), memcheck of
# the merging kernel (its unmerged branch, now unreachable, was removed after the first call),
# then the lab (merge-v3.toml). Writes $OUT/v61.tar.gz.
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 330 ))}"
export MLALAB_STOP_AT
source scripts/session_steps.sh
session_folder v61
unpack_builds v61 || exit 1
info_step
step gpu_tests timeout 100 build-v61/tests/mlalab_gpu_tests \
  --gtest_filter='Layouts/DecodeSweep.*:JudgeHereGpu.*:DispatcherCapture.*'
step memcheck env MLALAB_TEST_VARIANTS='_merge$' \
  MLALAB_TEST_CASES='^(all_lengths_h16_p64_cluster_splits|b4_h17_cluster_splits_p64)$' \
  timeout 100 compute-sanitizer --tool memcheck --error-exitcode 1 \
  build-v61/tests/mlalab_gpu_tests --gtest_filter='Layouts/DecodeSweep.*'
step ab_merge-v3 timeout 200 build-v61/bin/mlalab ab docs/results/2026-12-06-v61/merge-v3.toml \
  --out "$out/merge-v3"
exit $status
