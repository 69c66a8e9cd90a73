#!/bin/bash
# Version 65b's device call (not run in session 52: its device time was spent), carry
# ["build-d/disc.txz", "build-d/headbin.txz"]. disc: `git apply v65b.patch` on main, then
# `MLALAB_CUDA_ARCHS=90a bash scripts/build.sh build-disc` and `scripts/pack_build.sh build-disc
# build-d/disc.txz` (all variants, with tests); headbin: main's build, bin/mlalab alone, packed
# as `tar -cJf build-d/headbin.txz -C DIR bin/mlalab` (the labs' baseline arm, build-headbin).
# The four labs, the GPU tests and memcheck of the variants they time, then both equal-length
# tables re-tuned with the change (the combine is in every variant's code hash: landing needs
# them, and on an H200 they replace ../2026-12-01-h200-tuning/'s). ~9 min on an H200.
# Writes $OUT/discard65b.tar.gz and $OUT/disc65b-tune.tar.gz.
export MLALAB_STOP_AT=$(( $(date +%s) + ${MLALAB_CALL_SECONDS:-570} ))
source scripts/session_steps.sh
session_folder discard65b
unpack_builds disc headbin || exit 1
info_step
R=docs/results/2026-12-07-discard
for lab in h16 h128 study mixed-h128; do
  step "ab_$lab" timeout 150 build-disc/bin/mlalab ab "$R/$lab.toml" --out "$out/$lab"
done
variants='^(wgmma_h16_t64_w4_s2|wgmma_h64_t32_w8_s4|wgmma_h64_t64_w8_s2|h16_t16_w4_s2)$'
step gpu_tests env MLALAB_TEST_VARIANTS="$variants" build-disc/tests/mlalab_gpu_tests
step memcheck env MLALAB_TEST_VARIANTS="$variants" compute-sanitizer --tool memcheck \
  --error-exitcode 1 build-disc/tests/mlalab_gpu_tests --gtest_filter='Layouts/DecodeSweep.*'
MLALAB_ARCHIVE_DIR=$OUT bash scripts/gpu_session.sh build-disc /tmp/mlalab-session/disc65b-tune \
  tune
exit $status
