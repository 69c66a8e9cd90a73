#!/bin/bash
# Session 34's one call, if a device is lent (no room for both of version 50's landing calls
# after the failed starts): version 51's checks and labs (run1.sh, ~3 min), then the landing
# checks of whichever full build should land: version 51's if its 128-head lab accepted it and
# neither other lab rejected it, else version 50's (land1.sh's tests and sanitizers, without
# its labs, whose old arm would not fit in the carry). The full build of version 51:
#   (worktree of main, both patches applied) MLALAB_VARIANTS='.*' MLALAB_CUDA_ARCHS=90a \
#     bash scripts/build.sh build-v51full; bash scripts/pack_build.sh build-v51full build-d/v51full.txz
# Carry ["build-d/land.txz", "build-d/v51full.txz"]. Writes $OUT/v51.tar.gz and
# $OUT/landing.tar.gz (with candidate.txt: which build).
T0=$(date +%s)
R=docs/results/2026-12-05-h200-v51
MLALAB_STOP_AT=$(( T0 + 190 )) bash $R/run1.sh
labs=/tmp/mlalab-session/v51
candidate=land
if grep -q "ACCEPTED" $labs/ab_rest-first-h128.log 2>/dev/null &&
   ! grep -q "REJECTED" $labs/ab_rest-first-page1.log $labs/ab_rest-first-h16.log; then
  candidate=v51
fi
mkdir -p /tmp/mlalab-session/landing && echo "$candidate" > /tmp/mlalab-session/landing/candidate.txt
echo "landing checks of build-$candidate"
export MLALAB_STOP_AT=$(( T0 + 570 ))
export MLALAB_SANITIZE_VARIANTS='^(h16_t16_w4_s2|wgmma_h64_t(64_w8_s2|32_w8_s4)|wgmma_h16_t64_w4_s2)$'
export MLALAB_SANITIZE_CASES='^(b3_h64_p64|b3_h16_p128|b3_h17_p16|one_long_among_short_b9_h128_p64|b1_h128_4097_p1|mixed_b97_h17_p1|all_empty_b4_h16_p64)$'
export MLALAB_SYNCCHECK_VARIANTS='^wgmma_h64_t64_w8_s2$' MLALAB_RACECHECK_VARIANTS='^h16_t16_w4_s2$'
MLALAB_ARCHIVE_DIR="$OUT" bash scripts/gpu_session.sh build-$candidate /tmp/mlalab-session/landing \
  info tests sanitize
