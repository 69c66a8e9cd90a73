#!/bin/bash
# Version 61's second device call (any Hopper), carry ["build-d/v61.txz"]: after the first call
# (h100-s47a/), the plan merges only where clusters take no more waves than the CTAs, and
# unmerged launches run the kernel without the merge. The GPU tests of the four 2-stage
# swapped variants (correctness of both kernels, resident clusters of every size), then the
# lab (merge-v3.toml). The merging kernel's code is the one memcheck and synccheck passed in
# the first call. Writes $OUT/v61.tar.gz.
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 330 ))}"
export MLALAB_STOP_AT
source scripts/session_steps.sh
session_folder v61
unpack_builds v61 || exit 1
info_step
step gpu_tests timeout 100 build-v61/tests/mlalab_gpu_tests \
  --gtest_filter='Layouts/DecodeSweep.*:JudgeHereGpu.*:DispatcherCapture.*'
step ab_merge-v3 timeout 200 build-v61/bin/mlalab ab docs/results/2026-12-06-v61/merge-v3.toml \
  --out "$out/merge-v3"
exit $status
