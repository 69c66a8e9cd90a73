#!/bin/bash
# Version 62's device call (any Hopper card), carry ["build-d/v62.txz", "build-d/land60.txz"]
# (v62: scripts/pack_build.sh of `MLALAB_VARIANTS='^wgmma_.*' MLALAB_CUDA_ARCHS=90a bash
# scripts/build.sh build-v62`, tests included; land60: main's build before it). The decode
# sweep of every wgmma variant (both layouts, page sizes 1-128), memcheck of the cp.async
# cases, then the lab, old against new. Writes $OUT/v62.tar.gz.
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 560 ))}"
export MLALAB_STOP_AT
source scripts/session_steps.sh
session_folder v62
unpack_builds v62 land60 || exit 1
info_step
# Registers and spills of every variant (a spilling kernel would be pruned).
step configs build-v62/bin/mlalab configs
step gpu_tests timeout 200 build-v62/tests/mlalab_gpu_tests \
  --gtest_filter='Layouts/DecodeSweep.*:DecodeValidation.*'
step memcheck env MLALAB_TEST_VARIANTS='^(wgmma_h64_t64_w8_s2|wgmma_h16_t64_w4_s2_whole)$' \
  MLALAB_TEST_CASES='^(all_lengths_h17_p1|b1_h128_4097_p1|b3_h17_p16)$' timeout 150 \
  compute-sanitizer --tool memcheck --error-exitcode 1 build-v62/tests/mlalab_gpu_tests \
  --gtest_filter='Layouts/DecodeSweep.*'
# The copy loop's machine code in the 32-token kernel (was ~38 instructions per 6 LDGSTS).
step sass bash -c "cuobjdump -sass build-v62/bin/mlalab |
  awk '/Function :/ { keep = /decode_kernelILi32ELi4ELb0E/ } keep' |
  grep -n -B24 -A4 LDGSTS | head -150"
R=docs/results/2026-12-07-v62
for experiment in page1-h128-t32 page1-h128-t64 page1-h16 page64-h128; do
  step "ab_$experiment" timeout 100 build-v62/bin/mlalab ab "$R/$experiment.toml" \
    --out "$out/$experiment"
done
exit $status
