#!/bin/bash
# Landing version 55 (ACCEPTED on an H100, +2.4 % at C1; perf-notes "Version 55"), two calls on
# an H200, whose tables docs/results/2026-12-01-h200-tuning/ are:
#   bash docs/results/2026-12-05-timeline-clock/land.sh checks   (~6 min: GPU tests, sanitizers)
#   bash docs/results/2026-12-05-timeline-clock/land.sh tune     (~8 min: both equal-length tables
#                                                                 --fresh, then issue 12's targets)
# with carry ["build-d/land55.txz"]: the full build (68 variants, sm_90a, tests) of main with
# swapped-pieces-main.patch applied, made here in session 38 (a worktree of dcb41c2):
#   MLALAB_VARIANTS='.*' MLALAB_CUDA_ARCHS=90a bash scripts/build.sh build-land55
#   bash scripts/pack_build.sh build-land55 build-d/land55.txz
# Then apply the patch to main, install the re-tuned tables (`cp` from the archive's tune/ after
# reading its logs: every hash the build's), commit the targets under a new results folder.
# Writes $OUT/land55-STAGE.tar.gz.
stage=${1:?checks or tune}
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 560 ))}"
export MLALAB_STOP_AT
source scripts/session_steps.sh
unpack_builds land55 || exit 1
export MLALAB_ARCHIVE_DIR="$OUT"
case "$stage" in
  checks)
    export MLALAB_SANITIZE_VARIANTS='^(h16_t16_w4_s2|wgmma_h64_t(64_w8_s2|32_w8_s4)|wgmma_h16_t64_w4_s2)$'
    export MLALAB_SANITIZE_CASES='^(b3_h64_p64|b3_h16_p128|b3_h17_p16|one_long_among_short_b9_h128_p64|b1_h128_4097_p1|mixed_b97_h17_p1|all_empty_b4_h16_p64)$'
    export MLALAB_SYNCCHECK_VARIANTS='^wgmma_h16_t64_w4_s2$' MLALAB_RACECHECK_VARIANTS='^h16_t16_w4_s2$'
    bash scripts/gpu_session.sh build-land55 /tmp/mlalab-session/land55-checks info tests sanitize
    ;;
  tune)
    export MLALAB_PEERS_JSON=docs/results/2026-12-04-h200-v38/peers/peers.json
    export MLALAB_TARGETS_VARIANTS=h16_t16_w4_s2,wgmma_h64_t32_w8_s4,wgmma_h64_t64_w8_s2,wgmma_h16_t64_w4_s2
    bash scripts/gpu_session.sh build-land55 /tmp/mlalab-session/land55-tune info tune targets
    ;;
  *) echo "land.sh: checks or tune, not '$stage'" >&2; exit 2 ;;
esac
