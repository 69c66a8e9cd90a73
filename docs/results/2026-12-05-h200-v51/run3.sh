#!/bin/bash
# After run2.sh, the second landing call: both tuning tables re-tuned --fresh and issue 12's
# targets (as ../2026-12-05-h200-v50/land2.sh) with the build run2.sh checked:
#   bash docs/results/2026-12-05-h200-v51/run3.sh v51    (carry ["build-d/v51full.txz"])
#   bash docs/results/2026-12-05-h200-v51/run3.sh land   (carry ["build-d/land.txz"])
# Writes $OUT/tune.tar.gz.
candidate=${1:?land or v51}
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 570 ))}"
export MLALAB_STOP_AT
archive=build-d/$candidate.txz
[ "$candidate" = v51 ] && archive=build-d/v51full.txz
[ -x build-$candidate/bin/mlalab ] || { mkdir -p build-$candidate && tar -xJf $archive -C build-$candidate; } || exit 1
export MLALAB_PEERS_JSON=docs/results/2026-12-04-h200-v38/peers/peers.json
export MLALAB_TARGETS_VARIANTS=h16_t16_w4_s2,wgmma_h64_t32_w8_s4,wgmma_h64_t64_w8_s2,wgmma_h16_t64_w4_s2
MLALAB_ARCHIVE_DIR="$OUT" bash scripts/gpu_session.sh build-$candidate /tmp/mlalab-session/tune info tune targets
