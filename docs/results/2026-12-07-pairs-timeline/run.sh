#!/bin/bash
# Per-CTA timelines of the 64-token kernel at 128 heads, 4,096 tokens: batch 32 (two splits
# merged as cluster pairs, the heuristic's plan) against batch 64 (one split), the same 128
# CTAs of half and whole sequences. Carry ["build-d/tl.txz"] (../2026-12-07-mixed-timeline/
# run.sh says how it is built). Writes $OUT/pairs-timeline.tar.gz.
export MLALAB_STOP_AT=$(( $(date +%s) + ${MLALAB_CALL_SECONDS:-200} ))
source scripts/session_steps.sh
session_folder pairs-timeline
unpack_builds tl || exit 1
info_step
common=(--heads 128 --context 4096 --variant wgmma_h64_t64_w8_s2 --backend cuda)
for batch in 32 64; do
  step "b$batch" build-tl/bin/mlalab bench "${common[@]}" --batch $batch \
    --timeline "$out/b$batch.json"
done
exit $status
