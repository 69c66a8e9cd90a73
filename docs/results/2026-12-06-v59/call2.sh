#!/bin/bash
# Version 59's second device call (an H200: needs_h200), carry ["build-d/land59.txz"]: issue 12's
# targets with the _whole 2-stage variant among the variants timed (scripts/land_kernel_change.sh's
# targets stage alone; the tables were re-tuned by call1.sh). Writes $OUT/land59-targets.tar.gz.
export MLALAB_STOP_AT=$(( $(date +%s) + 575 ))
source scripts/session_steps.sh
unpack_builds land59 || exit 1
export MLALAB_PEERS_JSON=docs/results/2026-12-04-h200-v38/peers/peers.json
export MLALAB_TARGETS_VARIANTS=h16_t16_w4_s2,wgmma_h64_t32_w8_s4,wgmma_h64_t64_w8_s2,\
wgmma_h16_t64_w4_s2,wgmma_h16_t64_w4_s2_whole
MLALAB_ARCHIVE_DIR=$OUT exec bash scripts/gpu_session.sh build-land59 \
  /tmp/mlalab-session/land59-targets info targets
