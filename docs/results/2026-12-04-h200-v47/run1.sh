#!/bin/bash
# Version 47's device call (written in session 31, which had no device; run in session 33).
# It also measures version 46 (../2026-12-04-h200-v46/), as a second variant of the same lab.
# Before it, here (from b323309 or a later main whose src/ is still version 44's):
#   git apply docs/results/2026-12-04-h200-v47/merge-in-decode.patch
#   MLALAB_VARIANTS='^(h16_t16_w4_s2|wgmma_h64_t64_w8_s2|wgmma_h64_t32_w8_s4|wgmma_h16_t64_w4_s2)$' \
#     MLALAB_CUDA_ARCHS=90a bash scripts/build.sh build-v47; git apply -R <the same patch>
#   git apply docs/results/2026-12-04-h200-v46/combine-one-trip.patch, the same build into
#     build-v46 with MLALAB_BUILD_TESTS=OFF, git apply -R
#   MLALAB_VARIANTS='^wgmma_h64_t(32_w8_s4|64_w8_s2)$' MLALAB_CUDA_ARCHS=90a \
#     bash scripts/build_previous.sh 07bb6e7            (build-prev: version 44's kernels)
#   for b in prev v46 v47; do bash scripts/pack_build.sh build-$b build-d/$b.txz; done
# and call with carry ["build-d"]. GPU tests of the four variants, memcheck and synccheck of
# both 64-head wgmma variants on the cases with balanced launches, then both labs.
# The device kills a call at 600 s: no step starts after MLALAB_STOP_AT (set it once, before
# this script, when another shares the call), and $OUT/*.tar.gz is packed after every stage.
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 570 ))}"
export MLALAB_STOP_AT
for b in prev v46 v47; do
  mkdir -p build-$b && tar -xJf build-d/$b.txz -C build-$b || exit 1
done
export MLALAB_TEST_VARIANTS='^(h16_t16_w4_s2|wgmma_h64_t64_w8_s2|wgmma_h64_t32_w8_s4|wgmma_h16_t64_w4_s2)$'
export MLALAB_SANITIZE_VARIANTS='^wgmma_h64_t(64_w8_s2|32_w8_s4)$'
export MLALAB_SANITIZE_CASES='^(b3_h64_p64|b3_h128_long_p64|one_long_among_short_b9_h128_p64|one_long_among_many_b24_h128_p64|all_empty_b4_h16_p64)$'
export MLALAB_SYNCCHECK_VARIANTS='^wgmma_h64_t64_w8_s2$' MLALAB_RACECHECK_VARIANTS='^h16_t16_w4_s2$'
export MLALAB_AB_EXPERIMENTS="docs/results/2026-12-04-h200-v47/merge-in-decode.toml docs/results/2026-12-04-h200-v47/merge-in-decode-equal.toml docs/results/2026-12-04-h200-v47/merge-in-decode-tail.toml"
MLALAB_ARCHIVE_DIR="$OUT" bash scripts/gpu_session.sh build-v47 /tmp/mlalab-session/v47 info tests sanitize ab
