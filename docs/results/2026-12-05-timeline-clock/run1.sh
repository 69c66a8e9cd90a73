#!/bin/bash
# Session 38's call, written while no device was lent (run it first in the next session).
# 1. Where the fixed µs of a split launch go, and at what SM clock the ring's cycles were
#    counted: a timeline build whose parts record the SM clock at their end, whose prologue
#    records when the CTA knew its work and when q's copy was issued, and whose swapped kernel
#    records its MMA warps' tile events; its bench --timeline at the split launches the targets
#    are short at (128 heads: 8, 2, 1 splits; 16 heads, swapped: batch 1, 8, 32, 128).
# 2. nvidia-smi's SM clock, power and throttle reasons every 50 ms while main's build runs the
#    128-head and 16-head batches for ~7 s each.
# 3. Version 54 (q's copy from a second issuer, patch q-issuer.patch): the sweep, the lab
#    against main at 128 and 16 heads, memcheck on a subset.
# Built here (2 cores, ~6 min each; ccache shares most of it):
#   MLALAB_TIMELINE=ON MLALAB_VARIANTS='^(wgmma_h64_t64_w8_s2|wgmma_h16_t64_w4_s2)$' \
#     MLALAB_CUDA_ARCHS=90a bash scripts/build.sh build-tl
#   MLALAB_VARIANTS=... MLALAB_CUDA_ARCHS=90a MLALAB_BUILD_TESTS=OFF \
#     bash scripts/build.sh build-main2                 (main at 50795f6, normal)
#   (a worktree of 50795f6 with q-issuer.patch applied) MLALAB_VARIANTS=... \
#     MLALAB_CUDA_ARCHS=90a bash scripts/build.sh build-v54
#   bash scripts/pack_build.sh build-X build-d/X.txz   for X in tl, main2, v54
# Call with carry ["build-d/tl.txz", "build-d/main2.txz", "build-d/v54.txz"]. Writes
# $OUT/clock.tar.gz (packed again after every step); no step starts after MLALAB_STOP_AT.
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 540 ))}"
R=docs/results/2026-12-05-timeline-clock
source scripts/session_steps.sh  # step NAME CMD...: bounded by MLALAB_STOP_AT, packed
session_folder clock
unpack_builds tl main2 v54 || exit 1
info_step
step timeline_gpu_test build-tl/tests/mlalab_gpu_tests --gtest_filter='RunCudaBench.ATimeline*'

timeline_rows() {
  local case name heads batch variant
  for case in "h128_b8 128 8 wgmma_h64_t64_w8_s2" "h128_b32 128 32 wgmma_h64_t64_w8_s2" \
              "h128_b64 128 64 wgmma_h64_t64_w8_s2" "h16_b1 16 1 wgmma_h16_t64_w4_s2" \
              "h16_b8 16 8 wgmma_h16_t64_w4_s2" "h16_b32 16 32 wgmma_h16_t64_w4_s2" \
              "h16_b128 16 128 wgmma_h16_t64_w4_s2"; do
    read -r name heads batch variant <<< "$case"
    build-tl/bin/mlalab bench --heads "$heads" --batch "$batch" --context 4096 \
      --variant "$variant" --timeline "$out/timeline_$name.json" || return 1
    xz -f "$out/timeline_$name.json"
  done
}
export out
export -f timeline_rows  # steps run under timeout: a function goes through bash -c
step timelines bash -c timeline_rows

sustained_clocks build-main2
step sweep_v54 build-v54/tests/mlalab_gpu_tests --gtest_filter='Layouts/DecodeSweep.*'
step ab_h128 build-v54/bin/mlalab ab $R/q-issuer-h128.toml --out "$out/ab-h128"
step ab_h16 build-v54/bin/mlalab ab $R/q-issuer-h16.toml --out "$out/ab-h16"
step memcheck_v54 env MLALAB_TEST_CASES='^(b3_h128_long_p64|b1_h128_4097_p1|b97_h128_len64_p64)$' \
  compute-sanitizer --tool memcheck --error-exitcode 1 build-v54/tests/mlalab_gpu_tests \
  --gtest_filter='Layouts/DecodeSweep.*'
exit $status
