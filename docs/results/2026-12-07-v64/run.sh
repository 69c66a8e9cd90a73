#!/bin/bash
# Version 64's device call (any Hopper card), carry ["build-d/headbin.txz", "build-d/pf.txz",
# "build-d/tlo.txz", "build-d/tln.txz"]: headbin is bin/mlalab alone of head.txz, main's full
# sm_90a build (old; its tests left out for the 64 MiB a call carries), pf the change
# (`MLALAB_VARIANTS='^(wgmma_.*|h16_t16_w4_s2)$' MLALAB_CUDA_ARCHS=90a bash scripts/build.sh
# build-pf`, tests included), tlo and tln timeline builds of wgmma_h16_t64_w4_s2 and
# wgmma_h64_t64_w8_s2 before and after (MLALAB_TIMELINE=ON). The prologue's timelines, old and
# new, at each shape in turn; the decode sweep and memcheck of the change (it moves no barrier:
# no synccheck); then the lab, old against new. Writes $OUT/v64.tar.gz; prologue.py reads the
# timelines.
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 450 ))}"
export MLALAB_STOP_AT
source scripts/session_steps.sh
session_folder v64
unpack_builds headbin pf tlo tln || exit 1
info_step
step configs build-pf/bin/mlalab configs
shapes=("16 1 wgmma_h16_t64_w4_s2" "16 8 wgmma_h16_t64_w4_s2" "16 32 wgmma_h16_t64_w4_s2"
        "128 1 wgmma_h64_t64_w8_s2" "128 8 wgmma_h64_t64_w8_s2" "128 64 wgmma_h64_t64_w8_s2")
for shape in "${shapes[@]}"; do
  read -r heads batch variant <<< "$shape"
  for build in tlo tln; do
    step "tl_${build}_h${heads}_b${batch}" "build-$build/bin/mlalab" bench --heads "$heads" \
      --batch "$batch" --context 4096 --variant "$variant" --backend cuda \
      --timeline "$out/tl_${build}_h${heads}_b${batch}.json"
  done
done
step prologue python3 docs/results/2026-12-07-v64/prologue.py "$out"/tl_*.json
R=docs/results/2026-12-07-v64
lab() {
  step "ab_$1" timeout 110 build-pf/bin/mlalab ab "$R/$1.toml" --out "$out/$1"
}
lab h16  # first: the call's limit may cut the later steps
tested='^wgmma_(h16_t64_w4_s2|h16_t64_w4_s2_whole|h64_t64_w8_s2|h64_t32_w8_s4)$'
step gpu_tests env MLALAB_TEST_VARIANTS="$tested" timeout 150 build-pf/tests/mlalab_gpu_tests \
  --gtest_filter='Layouts/DecodeSweep.*:DecodeValidation.*:DispatcherCapture.*'
cases='^(b3_h64_p64|b3_h128_long_p64|b3_h17_p16|b3_h16_p128)$'
step memcheck env MLALAB_TEST_VARIANTS='^wgmma_(h16_t64_w4_s2|h64_t64_w8_s2)$' \
  MLALAB_TEST_CASES="$cases" timeout 100 compute-sanitizer --tool memcheck --error-exitcode 1 \
  build-pf/tests/mlalab_gpu_tests --gtest_filter='Layouts/DecodeSweep.*'
lab h128
exit $status
