#!/bin/bash
# Version 61b's device call (any Hopper), carry ["build-d/v61.txz"]: after the third
# (h100-s48b/: the merge costs ~0.7 µs per split), one arrival per peer. The GPU sweep of the
# _merge variants (both layouts), memcheck and synccheck of the merging kernel, then the merge
# against the combine at equal split counts (third.sh's labs), and merge-v3.toml again: its
# third arm is batch 8's test, 8 merged splits against the heuristic's 16 with the combine.
# Writes $OUT/v61b.tar.gz.
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 330 ))}"
export MLALAB_STOP_AT
source scripts/session_steps.sh
session_folder v61b
unpack_builds v61 || exit 1
info_step
step gpu_tests env MLALAB_TEST_VARIANTS='_merge$' timeout 100 build-v61/tests/mlalab_gpu_tests \
  --gtest_filter='Layouts/DecodeSweep.*:JudgeHereGpu.*'
for tool in memcheck synccheck; do
  step "$tool" env MLALAB_TEST_VARIANTS='_merge$' \
    MLALAB_TEST_CASES='^(all_lengths_h16_p64_cluster_splits|b4_h17_cluster_splits_p64)$' \
    timeout 100 compute-sanitizer --tool "$tool" --error-exitcode 1 \
    build-v61/tests/mlalab_gpu_tests --gtest_filter='Layouts/DecodeSweep.*'
done
for n in 16 8 4; do
  step "ab_equal-$n" timeout 70 build-v61/bin/mlalab ab \
    "docs/results/2026-12-06-v61/equal-$n.toml" --out "$out/equal-$n"
done
step ab_merge-v3 timeout 95 build-v61/bin/mlalab ab docs/results/2026-12-06-v61/merge-v3.toml \
  --out "$out/merge-v3"
exit $status
