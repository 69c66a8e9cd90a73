#!/bin/bash
# Version 49's device call (session 33). Before it, here, with version 49 in the working tree
# (or its patch, l2-prefetch.patch, applied to a main whose src/ is version 44's):
#   MLALAB_VARIANTS='^(h16_t16_w4_s2|wgmma_h64_t64_w8_s2|wgmma_h64_t32_w8_s4|wgmma_h16_t64_w4_s2)$' \
#     MLALAB_CUDA_ARCHS=90a bash scripts/build.sh build-v49
#   bash scripts/pack_build.sh build-v49 build-d/v49.txz
# (build-d/prev.txz: version 44's kernels, ../2026-12-04-h200-v47/run1.sh says how) and call
# with carry ["build-d/prev.txz", "build-d/v49.txz"]. GPU tests of the four variants,
# memcheck of the three wgmma variants on the cases whose tiles go by TMA (whole, partial and
# out-of-range pages), synccheck, then the three labs.
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 570 ))}"
export MLALAB_STOP_AT
for b in prev v49; do
  mkdir -p build-$b && tar -xJf build-d/$b.txz -C build-$b || exit 1
done
export MLALAB_TEST_VARIANTS='^(h16_t16_w4_s2|wgmma_h64_t64_w8_s2|wgmma_h64_t32_w8_s4|wgmma_h16_t64_w4_s2)$'
export MLALAB_SANITIZE_VARIANTS='^wgmma_h(64_t64_w8_s2|64_t32_w8_s4|16_t64_w4_s2)$'
export MLALAB_SANITIZE_CASES='^(b3_h64_p64|b3_h16_p128|b3_h128_long_p64|one_long_among_short_b9_h128_p64|mixed_b97_h17_p1|all_empty_b4_h16_p64)$'
export MLALAB_SYNCCHECK_VARIANTS='^wgmma_h64_t64_w8_s2$' MLALAB_RACECHECK_VARIANTS='^h16_t16_w4_s2$'
export MLALAB_AB_EXPERIMENTS="docs/results/2026-12-05-h200-v49/l2-prefetch-h128.toml docs/results/2026-12-05-h200-v49/l2-prefetch-h16.toml docs/results/2026-12-05-h200-v49/l2-prefetch-h16-small.toml"
MLALAB_ARCHIVE_DIR="$OUT" bash scripts/gpu_session.sh build-v49 /tmp/mlalab-session/v49 info tests sanitize ab
