#!/bin/bash
# One H200 call for version 60, carry ["build-d/base60.txz", "build-d/land60.txz"]: the lab A/B
# (h16.toml, h128.toml: the decision; the committed tables stay valid either way, since the
# patch leaves every code hash as it is), then issue 12's targets with the patched build.
# Writes $OUT/v60-ab.tar.gz and $OUT/land60.tar.gz. MLALAB_LAND_STAGES: the gpu_session.sh
# stages run with the patched build after the A/B (default targets; "tune targets tests" also
# re-tunes both tables; empty: the A/B alone); MLALAB_CALL_SECONDS (default 570) bounds the call.
# MLALAB_LAND_BUILD (default land60) names the new side: `head` (build-d/head.txz, a full 90a
# build of main with tests, scripts/pack_build.sh) measures main since version 63 instead, whose
# 64-head variants' code hashes differ from the tables' (then re-tune: 'tune targets tests').
export MLALAB_STOP_AT=$(( $(date +%s) + ${MLALAB_CALL_SECONDS:-570} ))
source scripts/session_steps.sh
session_folder v60-ab
land=${MLALAB_LAND_BUILD:-land60}
unpack_builds base60 "$land" || exit 1
info_step
R=docs/results/2026-12-06-l2-promotion
step ab_h16 timeout 140 "build-$land/bin/mlalab" ab $R/h16.toml --out "$out/h16"
step ab_h128 timeout 110 "build-$land/bin/mlalab" ab $R/h128.toml --out "$out/h128"
v60_status=$status
export MLALAB_PEERS_JSON=docs/results/2026-12-04-h200-v38/peers/peers.json
export MLALAB_TARGETS_VARIANTS=h16_t16_w4_s2,wgmma_h64_t32_w8_s4,wgmma_h64_t64_w8_s2,\
wgmma_h16_t64_w4_s2,wgmma_h16_t64_w4_s2_whole
read -r -a stages <<< "${MLALAB_LAND_STAGES-targets}"
if [ "${#stages[@]}" -gt 0 ]; then
  MLALAB_ARCHIVE_DIR=$OUT bash scripts/gpu_session.sh "build-$land" "/tmp/mlalab-session/$land" \
    "${stages[@]}" || v60_status=1
fi
exit $v60_status
