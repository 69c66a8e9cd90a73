#!/bin/bash
# Landing version 50, second call (after land1.sh): both tuning tables re-tuned --fresh with
# the full build (every wgmma code hash changed), and issue 12's targets (peers: version 38's
# table, as at version 44). Then, here: apply take-after-issue.patch on main, install the
# tables in ../2026-12-01-h200-tuning/ (`mlalab tune --out TABLE --explain 64,4096` must say
# the machine code of all 68 is the table's), commit with the reports. Same carry as land1.sh.
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 570 ))}"
export MLALAB_STOP_AT
[ -x build-land/bin/mlalab ] || { mkdir -p build-land && tar -xJf build-d/land.txz -C build-land; } || exit 1
export MLALAB_PEERS_JSON=docs/results/2026-12-04-h200-v38/peers/peers.json
export MLALAB_TARGETS_VARIANTS=h16_t16_w4_s2,wgmma_h64_t32_w8_s4,wgmma_h64_t64_w8_s2,wgmma_h16_t64_w4_s2
MLALAB_ARCHIVE_DIR="$OUT" bash scripts/gpu_session.sh build-land /tmp/mlalab-session/tune info tune targets
