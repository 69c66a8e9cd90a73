#!/bin/bash
# Version 61's third device call (any Hopper), carry ["build-d/v61.txz"]: after the second
# (h100-s48a/: where the plan merges, the merge equals the combine within 0.5 %; 8 merged
# splits at batch 8 lose 18 % to the heuristic's 16 with the combine), the merge against the
# combine at equal split counts (16, 8, 4), at batches whose clusters all fit at once, so the
# merge's own worth is not mixed with the split count's. Writes $OUT/v61-equal.tar.gz.
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 200 ))}"
export MLALAB_STOP_AT
source scripts/session_steps.sh
session_folder v61-equal
unpack_builds v61 || exit 1
info_step
step gpu_tests timeout 60 build-v61/tests/mlalab_gpu_tests \
  --gtest_filter='JudgeHereGpu.AWholeGpuHoldsEverySplitClusterItsVariantsMerge'
for n in 16 8 4; do
  step "ab_equal-$n" timeout 70 build-v61/bin/mlalab ab \
    "docs/results/2026-12-06-v61/equal-$n.toml" --out "$out/equal-$n"
done
exit $status
