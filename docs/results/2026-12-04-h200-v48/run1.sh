#!/bin/bash
# Version 48's device call (written in session 31, which had no device; run in session 33).
# Before it, here (from a main whose src/ is still version 44's, b323309 or later):
#   git apply docs/results/2026-12-04-h200-v48/cp-async-two-pieces.patch
#   MLALAB_VARIANTS='^(h16_t16_w4_s2|wgmma_h64_t64_w8_s2|wgmma_h64_t32_w8_s4|wgmma_h16_t64_w4_s2)$' \
#     MLALAB_CUDA_ARCHS=90a bash scripts/build.sh build-v48; git apply -R <the same patch>
#   MLALAB_VARIANTS='^wgmma_h64_t(32_w8_s4|64_w8_s2)$' MLALAB_CUDA_ARCHS=90a \
#     bash scripts/build_previous.sh 07bb6e7            (build-prev: version 44's kernels)
#   for b in prev v48; do bash scripts/pack_build.sh build-$b build-d/$b.txz; done
# and call with carry ["build-d"] (with version 47's run1.sh in the same call, its archives
# too). GPU tests of the four variants, memcheck and synccheck of the three wgmma variants on
# the cases with pages below a tile, then both labs.
# The device kills a call at 600 s: no step starts after MLALAB_STOP_AT (set it once, before
# this script, when another shares the call), and $OUT/*.tar.gz is packed after every stage.
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 570 ))}"
export MLALAB_STOP_AT
for b in prev v48; do
  mkdir -p build-$b && tar -xJf build-d/$b.txz -C build-$b || exit 1
done
export MLALAB_TEST_VARIANTS='^(h16_t16_w4_s2|wgmma_h64_t64_w8_s2|wgmma_h64_t32_w8_s4|wgmma_h16_t64_w4_s2)$'
export MLALAB_SANITIZE_VARIANTS='^wgmma_h(64_t64_w8_s2|64_t32_w8_s4|16_t64_w4_s2)$'
export MLALAB_SANITIZE_CASES='^(one_token_b1_h1_p1|b3_h64_p32|b3_h17_p16|b1_h128_4097_p1|mixed_b97_h17_p1)$'
export MLALAB_SYNCCHECK_VARIANTS='^wgmma_h64_t(64_w8_s2|32_w8_s4)$' MLALAB_RACECHECK_VARIANTS='^h16_t16_w4_s2$'
export MLALAB_AB_EXPERIMENTS="docs/results/2026-12-04-h200-v48/cp-async-two-pieces.toml docs/results/2026-12-04-h200-v48/cp-async-page64.toml"
MLALAB_ARCHIVE_DIR="$OUT" bash scripts/gpu_session.sh build-v48 /tmp/mlalab-session/v48 info tests sanitize ab
