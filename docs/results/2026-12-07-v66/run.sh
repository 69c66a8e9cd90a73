#!/bin/bash
# One device call for version 66, carry ["build-d/v66.txz", "build-d/headbin.txz"]: v66 = the
# change's full sm_90a build with tests (scripts/pack_build.sh), headbin = main's bin/mlalab
# (the labs' baseline arm, whose path they name as build-headbin). The lab at 4,096 tokens
# decides: ACCEPTED goes on to the GPU tests of the swapped variants (every split policy),
# memcheck of the same, then re-tunes the tables the change makes stale (the swapped kernels'
# code hashes change): on an H200 the two equal-length ones of ../2026-12-01-h200-tuning/ and
# the two mixed-length ones of ../2026-12-01-h200-mixed-tuning/, on an H100 the two of
# ../2026-12-07-h100-tables/. Any other verdict goes on to the lab at 1,024 tokens instead.
# Writes $OUT/v66.tar.gz (and $OUT/v66-tune.tar.gz). MLALAB_CALL_SECONDS (default 570) bounds
# the call.
source scripts/session_steps.sh
begin_call v66 v66 headbin || exit 1
R=docs/results/2026-12-07-v66
step ab_h16 timeout 150 build-v66/bin/mlalab ab $R/h16.toml --out "$out/h16"
if ! grep -q "final rows by bulk copies: ACCEPTED" "$out/ab_h16.log"; then
  step ab_h16_1k timeout 130 build-v66/bin/mlalab ab $R/h16-1k.toml --out "$out/h16-1k"
  exit 1
fi
variants='^(wgmma_h16_t64_w4_s2|wgmma_h16_t64_w4_s2_whole|wgmma_h16_t64_w4_s3)$'
step gpu_tests env MLALAB_TEST_VARIANTS="$variants" build-v66/tests/mlalab_gpu_tests
step memcheck env MLALAB_TEST_VARIANTS="$variants" compute-sanitizer --tool memcheck \
  --error-exitcode 1 build-v66/tests/mlalab_gpu_tests --gtest_filter='Layouts/DecodeSweep.*'
[ "$status" -eq 0 ] || exit 1
tables=(tune)
nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && tables+=(tune_mixed)
MLALAB_ARCHIVE_DIR=$OUT bash scripts/gpu_session.sh build-v66 /tmp/mlalab-session/v66-tune \
  "${tables[@]}"
