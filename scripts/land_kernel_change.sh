#!/usr/bin/env bash
# A kernel change's landing on a device machine, from a full build packed here: its GPU tests
# and sanitizers (any Hopper card), or the re-tune of the four H200 tables (two of equal
# lengths, two of mixed) and issue 12's targets (the H200, whose tables they are: a changed
# kernel changes its code hash, and a Dispatcher refuses a table tuned with other code).
#
#   bash scripts/land_kernel_change.sh NAME checks   (~6 min)
#   bash scripts/land_kernel_change.sh NAME tune     (~9 min)
#
# NAME: build-d/NAME.txz, the full build (every variant, sm_90a, tests), made here by
#   MLALAB_VARIANTS='.*' MLALAB_CUDA_ARCHS=90a bash scripts/build.sh build-NAME
#   bash scripts/pack_build.sh build-NAME build-d/NAME.txz
# and carried (carry ["build-d/NAME.txz"]). Writes $OUT/NAME-STAGE.tar.gz. After `tune`,
# install the new tables by copying them from the archive's tune/ (after reading its logs).
set -uo pipefail
name=${1:?NAME: build-d/NAME.txz}
stage=${2:?checks or tune}
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 560 ))}"
export MLALAB_STOP_AT
source scripts/session_steps.sh
unpack_builds "$name" || exit 1
export MLALAB_ARCHIVE_DIR="$OUT"
case "$stage" in
  checks)
    # The variants of every family and the cases that reach its edges (odd heads, page 1, empty
    # and one-long-among-short batches).
    variants='^(h16_t16_w4_s2|wgmma_h64_t(64_w8_s2|32_w8_s4)|wgmma_h16_t64_w4_s(2|3)(_whole)?)$'
    cases='^(b3_h64_p64|b3_h16_p128|b3_h17_p16|one_long_among_short_b9_h128_p64|'
    cases+='b1_h128_4097_p1|mixed_b97_h17_p1|all_empty_b4_h16_p64)$'
    export MLALAB_SANITIZE_VARIANTS=$variants MLALAB_SANITIZE_CASES=$cases
    export MLALAB_SYNCCHECK_VARIANTS='^wgmma_h16_t64_w4_s2(_whole)?$'
    export MLALAB_RACECHECK_VARIANTS='^h16_t16_w4_s2$'
    exec bash scripts/gpu_session.sh "build-$name" "/tmp/mlalab-session/$name-checks" info tests \
      sanitize
    ;;
  tune)
    export MLALAB_PEERS_JSON=docs/results/2026-12-04-h200-v38/peers/peers.json
    targets=h16_t16_w4_s2,wgmma_h64_t32_w8_s4,wgmma_h64_t64_w8_s2,wgmma_h16_t64_w4_s2
    targets+=,wgmma_h16_t64_w4_s2_whole
    export MLALAB_TARGETS_VARIANTS=$targets
    # The targets last: the change lands only with all four tables, and a call whose time runs
    # out can measure the targets again later without tuning.
    exec bash scripts/gpu_session.sh "build-$name" "/tmp/mlalab-session/$name-tune" info tune \
      tune_mixed targets
    ;;
  *) echo "land_kernel_change.sh: checks or tune, not '$stage'" >&2; exit 2 ;;
esac
