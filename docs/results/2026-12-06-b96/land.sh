#!/bin/bash
# Landing version 55's first half alone (b96a: Sᵀ on the first piece, P·V as one group and the
# tile freed whole), if halves-v4.toml and halves-v3.toml say so (README.md). Two calls:
#   bash docs/results/2026-12-06-b96/land.sh tune     (H200, ~8 min: both equal-length tables
#                                                      --fresh, then issue 12's targets)
#   bash docs/results/2026-12-06-b96/land.sh checks   (any Hopper card, ~6 min: GPU tests and
#                                                      sanitizers)
# with carry ["build-d/fa.txz"]: the full build (every variant, sm_90a, tests) of the b96a
# worktree (main 096a8eb with b96a's edit), made here:
#   MLALAB_VARIANTS='.*' MLALAB_CUDA_ARCHS=90a bash scripts/build.sh build-fa
#   bash scripts/pack_build.sh build-fa build-d/fa.txz
# Writes $OUT/fa-STAGE.tar.gz.
stage=${1:?tune or checks}
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 560 ))}"
export MLALAB_STOP_AT
source scripts/session_steps.sh
unpack_builds fa || exit 1
export MLALAB_ARCHIVE_DIR="$OUT"
case "$stage" in
  checks)
    export MLALAB_SANITIZE_VARIANTS='^(h16_t16_w4_s2|wgmma_h64_t64_w8_s2|wgmma_h16_t64_w4_s(2|3))$'
    export MLALAB_SANITIZE_CASES='^(b3_h64_p64|b3_h16_p128|b3_h17_p16|one_long_among_short_b9_h128_p64|b1_h128_4097_p1|mixed_b97_h17_p1|all_empty_b4_h16_p64)$'
    export MLALAB_SYNCCHECK_VARIANTS='^wgmma_h16_t64_w4_s2$' MLALAB_RACECHECK_VARIANTS='^h16_t16_w4_s2$'
    bash scripts/gpu_session.sh build-fa /tmp/mlalab-session/fa-checks info tests sanitize
    ;;
  tune)
    export MLALAB_PEERS_JSON=docs/results/2026-12-04-h200-v38/peers/peers.json
    export MLALAB_TARGETS_VARIANTS=h16_t16_w4_s2,wgmma_h64_t32_w8_s4,wgmma_h64_t64_w8_s2,wgmma_h16_t64_w4_s2
    bash scripts/gpu_session.sh build-fa /tmp/mlalab-session/fa-tune info tune targets
    ;;
  *) echo "land.sh: tune or checks, not '$stage'" >&2; exit 2 ;;
esac
