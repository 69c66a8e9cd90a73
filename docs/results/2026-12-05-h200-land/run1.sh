#!/bin/bash
# Versions 47 and 48 together, in a full build (written in session 32, which had no device;
# not yet run). Run it after ../2026-12-04-h200-v47/run1.sh and ../2026-12-04-h200-v48/run1.sh
# have accepted both (else rebuild build-land with the accepted patch alone, below).
# Built here, session 32:
#   git worktree add --detach build-land-src HEAD; cd build-land-src
#   git apply ../docs/results/2026-12-04-h200-v47/merge-in-decode.patch
#   git apply ../docs/results/2026-12-04-h200-v48/cp-async-two-pieces.patch
#   MLALAB_VARIANTS='.*' MLALAB_CUDA_ARCHS=90a bash scripts/build.sh ../build-land
#   (back in the checkout) bash scripts/pack_build.sh build-land build-d/land.txz
#   MLALAB_VARIANTS='^(h16_t16_w4_s2|wgmma_h64_t64_w8_s2|wgmma_h64_t32_w8_s4|wgmma_h16_t64_w4_s2)$' \
#     MLALAB_CUDA_ARCHS=90a bash scripts/build_previous.sh 07bb6e7; \
#     bash scripts/pack_build.sh build-prev build-d/prev.txz
# and call with carry ["build-d"]. The GPU tests of every variant, the labs, then the sanitizers;
# the labs of what the patches touch beyond their own labs: the seesaw's balanced launch
# (version 47's merge), the swapped kernel and the portable balanced launch (regressions).
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 570 ))}"
export MLALAB_STOP_AT
for b in prev land; do
  mkdir -p build-$b && tar -xJf build-d/$b.txz -C build-$b || exit 1
done
R=docs/results/2026-12-05-h200-land
export MLALAB_AB_EXPERIMENTS="$R/merge-in-decode-t32.toml $R/regression-swapped-land.toml $R/regression-portable-balanced.toml"
# The sanitizers on the cases either patch's own call covers, now with both patches in.
export MLALAB_SANITIZE_VARIANTS='^(h16_t16_w4_s2|wgmma_h64_t(64_w8_s2|32_w8_s4)|wgmma_h16_t64_w4_s2)$'
export MLALAB_SANITIZE_CASES='^(b3_h64_p64|b3_h17_p16|one_long_among_short_b9_h128_p64|b1_h128_4097_p1|mixed_b97_h17_p1)$'
export MLALAB_SYNCCHECK_VARIANTS='^wgmma_h64_t64_w8_s2$' MLALAB_RACECHECK_VARIANTS='^h16_t16_w4_s2$'
MLALAB_ARCHIVE_DIR="$OUT" bash scripts/gpu_session.sh build-land /tmp/mlalab-session/land info tests ab sanitize
