#!/bin/bash
# Version 61's first device call (any Hopper card; an H100 here), carry ["build-d/v61.txz"]
# (scripts/pack_build.sh of a build of the four 2-stage swapped variants with tests:
# MLALAB_VARIANTS='^wgmma_h16_t64_w4_s2(_whole)?(_merge)?$' MLALAB_CUDA_ARCHS=90a
# MLALAB_CLUSTER_MERGE=ON): the GPU tests that reach the decode kernels and the plan (the
# sweep of those variants, the cluster cases among them; validation, feasibility, capture),
# memcheck and synccheck of the _merge variants, then the lab (merge-v3.toml). racecheck is
# left out as for the 64-head kernel's pairs: it does not model the cluster-scope mbarriers
# that order the remote stores (scripts/gpu_session.sh, sanitize). Writes $OUT/v61.tar.gz.
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 560 ))}"  # a calling script's, if set
export MLALAB_STOP_AT
source scripts/session_steps.sh
session_folder v61
unpack_builds v61 || exit 1
info_step
cases='^(all_lengths_h16_p64_cluster_splits|b4_h17_cluster_splits_p64|all_lengths_h16_p64|'
cases+='b3_h17_p16|all_empty_b4_h16_p64|one_long_among_short_b9_h16_p64)$'
step gpu_tests timeout 150 build-v61/tests/mlalab_gpu_tests \
  --gtest_filter='Layouts/DecodeSweep.*:DecodeValidation.*:JudgeHereGpu.*:DispatcherCapture.*'
step memcheck env MLALAB_TEST_VARIANTS='_merge$' MLALAB_TEST_CASES="$cases" timeout 150 \
  compute-sanitizer --tool memcheck --error-exitcode 1 build-v61/tests/mlalab_gpu_tests \
  --gtest_filter='Layouts/DecodeSweep.*'
step synccheck env MLALAB_TEST_VARIANTS='^wgmma_h16_t64_w4_s2_merge$' \
  MLALAB_TEST_CASES='^(b4_h17_cluster_splits_p64|b3_h17_p16)$' timeout 100 \
  compute-sanitizer --tool synccheck --error-exitcode 1 build-v61/tests/mlalab_gpu_tests \
  --gtest_filter='Layouts/DecodeSweep.*'
step ab_merge-v3 timeout 200 build-v61/bin/mlalab ab docs/results/2026-12-06-v61/merge-v3.toml \
  --out "$out/merge-v3"
exit $status
