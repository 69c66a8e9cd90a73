#!/bin/bash
# Per-CTA timelines of the 64-token kernel at 128 heads, batch 64 (V3, page 64): mixed
# lengths (uniform in 1,024-8,192) under the balanced split, equal lengths of their mean
# (4,608) under balanced:66 and under the heuristic split (one split). Carry
# ["build-d/tl.txz"]: scripts/pack_build.sh of `MLALAB_TIMELINE=ON
# MLALAB_VARIANTS='^wgmma_h64_t64_w8_s2$' MLALAB_CUDA_ARCHS=90a MLALAB_BUILD_TESTS=OFF bash
# scripts/build.sh build-tl`. Writes $OUT/mixed-timeline.tar.gz.
export MLALAB_STOP_AT=$(( $(date +%s) + ${MLALAB_CALL_SECONDS:-300} ))
source scripts/session_steps.sh
session_folder mixed-timeline
unpack_builds tl || exit 1
info_step
common=(--heads 128 --batch 64 --variant wgmma_h64_t64_w8_s2 --backend cuda)
step mixed_balanced build-tl/bin/mlalab bench "${common[@]}" --context 8192 \
  --lengths uniform:0.125 --split balanced --timeline "$out/mixed_balanced.json"
step equal_balanced build-tl/bin/mlalab bench "${common[@]}" --context 4608 \
  --split balanced:66 --timeline "$out/equal_balanced.json"
step equal_split build-tl/bin/mlalab bench "${common[@]}" --context 4608 \
  --timeline "$out/equal_split.json"
exit $status
