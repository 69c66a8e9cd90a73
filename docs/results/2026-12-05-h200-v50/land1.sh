#!/bin/bash
# Landing version 50, first call (written in session 33, after run1.sh accepted it at 128
# heads; not yet run): the full build's GPU tests of every variant, the sanitizers, and the two
# labs of what run1.sh did not measure (the swapped kernel, the balanced launch). Built here:
#   git worktree add --detach build-land-src HEAD; cd build-land-src
#   git apply ../docs/results/2026-12-05-h200-v50/take-after-issue.patch
#   MLALAB_VARIANTS='.*' MLALAB_CUDA_ARCHS=90a bash scripts/build.sh ../build-land
#   (back in the checkout) bash scripts/pack_build.sh build-land build-d/land.txz
# (build-d/prev.txz: ../2026-12-04-h200-v47/run1.sh says how) and call with carry
# ["build-d/prev.txz", "build-d/land.txz"]. land2.sh (same carry) then re-tunes both tables.
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 570 ))}"
export MLALAB_STOP_AT
for b in prev land; do
  mkdir -p build-$b && tar -xJf build-d/$b.txz -C build-$b || exit 1
done
R=docs/results/2026-12-05-h200-v50
export MLALAB_AB_EXPERIMENTS="$R/land-balanced.toml $R/land-swapped.toml"
export MLALAB_SANITIZE_VARIANTS='^(h16_t16_w4_s2|wgmma_h64_t(64_w8_s2|32_w8_s4)|wgmma_h16_t64_w4_s2)$'
export MLALAB_SANITIZE_CASES='^(b3_h64_p64|b3_h16_p128|b3_h17_p16|one_long_among_short_b9_h128_p64|b1_h128_4097_p1|mixed_b97_h17_p1|all_empty_b4_h16_p64)$'
export MLALAB_SYNCCHECK_VARIANTS='^wgmma_h64_t64_w8_s2$' MLALAB_RACECHECK_VARIANTS='^h16_t16_w4_s2$'
MLALAB_ARCHIVE_DIR="$OUT" bash scripts/gpu_session.sh build-land /tmp/mlalab-session/land info tests ab sanitize
