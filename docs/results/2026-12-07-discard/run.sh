#!/bin/bash
# One device call, carry ["build-d/disc.txz", "build-d/headbin.txz"]: disc = the change's full
# sm_90a build with tests, headbin = main's (bin/mlalab; the labs' baseline arm, whose path
# they name as build-headbin). The four labs, the GPU tests of the variants they time (every
# path through both combine kernels), memcheck of the same, then both equal-length tables
# re-tuned with the change on whatever card this is (an H200's or an H100's, for landing).
# Writes $OUT/discard.tar.gz and $OUT/disc-tune.tar.gz.
source scripts/session_steps.sh
begin_call discard disc headbin || exit 1
R=docs/results/2026-12-07-discard
for lab in h16 h128 mixed-h128 study; do
  step "ab_$lab" timeout 150 build-disc/bin/mlalab ab "$R/$lab.toml" --out "$out/$lab"
done
variants='^(wgmma_h16_t64_w4_s2|wgmma_h64_t32_w8_s4|wgmma_h64_t64_w8_s2|h16_t16_w4_s2)$'
step gpu_tests env MLALAB_TEST_VARIANTS="$variants" build-disc/tests/mlalab_gpu_tests
step memcheck env MLALAB_TEST_VARIANTS="$variants" compute-sanitizer --tool memcheck \
  --error-exitcode 1 build-disc/tests/mlalab_gpu_tests --gtest_filter='Layouts/DecodeSweep.*'
MLALAB_ARCHIVE_DIR=$OUT bash scripts/gpu_session.sh build-disc /tmp/mlalab-session/disc-tune tune
exit $status
