#!/bin/bash
# A device call useful on either card, carry ["build-d/v67.txz", "build-d/headbin.txz",
# "build-d/tlb.txz"]. On an H200: h200.sh (version 67 (a)'s lab and, if perf-notes' rule says
# so, its landing). On any other card: the per-CTA timeline of (b) (`groups-in-turn.patch` on
# (a); tlb = scripts/pack_build.sh of `MLALAB_TIMELINE=ON MLALAB_VARIANTS='^wgmma_h64_t64_w8_s2$'
# MLALAB_CUDA_ARCHS=90a MLALAB_BUILD_TESTS=OFF bash scripts/build.sh build-tlb` at 2e07359) at
# 128 heads, batch 32, the pairs' launch: how long group 0's share takes to cross alone, which
# (b)'s H100 lab says is not half of both groups' (../2026-12-07-pairs-timeline/h100-run3-v63/
# is main's, both groups at once). Writes $OUT/v67-h200.tar.gz (and $OUT/v67-tune.tar.gz), or
# $OUT/v67-turns-timeline.tar.gz.
bash docs/results/2026-12-07-v67/h200.sh
h200_status=$?
[ "$h200_status" -eq 3 ] || exit "$h200_status"  # 3: not an H200 (h200.sh did nothing)
source scripts/session_steps.sh
MLALAB_CALL_SECONDS=${MLALAB_CALL_SECONDS:-120} begin_call v67-turns-timeline tlb || exit 1
step b32 build-tlb/bin/mlalab bench --heads 128 --context 4096 --variant wgmma_h64_t64_w8_s2 \
  --backend cuda --batch 32 --timeline "$out/b32.json"
exit $status
