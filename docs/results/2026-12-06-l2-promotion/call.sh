#!/bin/bash
# Version 60's device call (an H200: needs_h200), carry ["build-d/base60.txz", "build-d/land60.txz"]:
# the lab A/B first (h16.toml, h128.toml: main's mlalab, base60, against main + no-promotion.patch,
# land60: scripts/pack_build.sh of the full build; the decision), then, with land60, both
# equal-length tables re-tuned and issue 12's targets, so a win lands without a second call
# (a loss discards them), and the GPU tests if time is left. Writes $OUT/v60-ab.tar.gz and
# $OUT/land60.tar.gz.
export MLALAB_STOP_AT=$(( $(date +%s) + 580 ))
source scripts/session_steps.sh
session_folder v60-ab
unpack_builds base60 land60 || exit 1
info_step
R=docs/results/2026-12-06-l2-promotion
step ab_h16 timeout 140 build-land60/bin/mlalab ab $R/h16.toml --out "$out/h16"
step ab_h128 timeout 110 build-land60/bin/mlalab ab $R/h128.toml --out "$out/h128"
export MLALAB_PEERS_JSON=docs/results/2026-12-04-h200-v38/peers/peers.json
export MLALAB_TARGETS_VARIANTS=h16_t16_w4_s2,wgmma_h64_t32_w8_s4,wgmma_h64_t64_w8_s2,\
wgmma_h16_t64_w4_s2,wgmma_h16_t64_w4_s2_whole
MLALAB_ARCHIVE_DIR=$OUT bash scripts/gpu_session.sh build-land60 /tmp/mlalab-session/land60 \
  tune targets tests || status=1
exit $status
