#!/bin/bash
# After run1.sh: both tuning tables re-tuned --fresh with the full build of versions 47 + 48
# (every code hash changed), and issue 12's targets (peers: version 38's table, as at version
# 44; the variants of version 44's targets). Install the tables in ../2026-12-01-h200-tuning/
# after reading the logs. Same carry.
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 570 ))}"
export MLALAB_STOP_AT
[ -x build-land/bin/mlalab ] || { mkdir -p build-land && tar -xJf build-d/land.txz -C build-land; } || exit 1
export MLALAB_PEERS_JSON=docs/results/2026-12-04-h200-v38/peers/peers.json
export MLALAB_TARGETS_VARIANTS=h16_t16_w4_s2,wgmma_h64_t32_w8_s4,wgmma_h64_t64_w8_s2,wgmma_h16_t64_w4_s2
MLALAB_ARCHIVE_DIR="$OUT" bash scripts/gpu_session.sh build-land /tmp/mlalab-session/tune info tune targets
