#!/bin/bash
# Both equal-length tuning tables and issue 12's targets on the card the call gets (session 51:
# an H100 80GB HBM3), with main's build: carry ["build-d/head.txz"] (a full sm_90a build of main
# since version 63, with tests: scripts/pack_build.sh). Writes $OUT/h100-head.tar.gz. The peer
# row of the targets reads MLALAB_PEERS_JSON, the H200's committed peer table (version 38): it is
# not measured by this call.
source scripts/session_steps.sh
unpack_builds head || exit 1
export MLALAB_STOP_AT=$(( $(date +%s) + ${MLALAB_CALL_SECONDS:-520} ))
export MLALAB_PEERS_JSON=docs/results/2026-12-04-h200-v38/peers/peers.json
export MLALAB_TARGETS_VARIANTS=h16_t16_w4_s2,wgmma_h64_t32_w8_s4,wgmma_h64_t64_w8_s2,\
wgmma_h16_t64_w4_s2,wgmma_h16_t64_w4_s2_whole
MLALAB_ARCHIVE_DIR=$OUT bash scripts/gpu_session.sh build-head /tmp/mlalab-session/h100-head \
  info tune targets
