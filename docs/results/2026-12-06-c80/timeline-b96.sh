#!/bin/bash
# Why version 55 costs the 2-stage swapped kernel 6.6 % at V4 batch 96 on the H200 (README.md)
# but gains 1.8 % at batch 80: the timeline builds of the kernel before version 55 (4dba366)
# and of main, each `mlalab bench --timeline` at batch 80 and 96 (V4, 16 heads, one split);
# then `python3 docs/results/2026-12-05-timeline-clock/analyze.py DIR` on the unpacked folder
# gives each row's prologue, tile period, landed->freed and tail. Built here (no tests):
#   MLALAB_TIMELINE=ON MLALAB_VARIANTS='^wgmma_h16_t64_w4_s2$' MLALAB_CUDA_ARCHS=90a \
#     MLALAB_BUILD_TESTS=OFF bash scripts/build.sh build-tlmain       (main, 0c5e8c6)
#   the same from a worktree of 4dba366 into build-tlpre
#   bash scripts/pack_build.sh build-tlX build-d/tlX.txz              (X: main, pre)
# Call on an H200 (needs_h200) with carry ["build-d/tlmain.txz", "build-d/tlpre.txz"]. Writes
# $OUT/timeline-b96.tar.gz.
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 300 ))}"
export MLALAB_STOP_AT
source scripts/session_steps.sh
session_folder timeline-b96
unpack_builds tlmain tlpre || exit 1
info_step
timelines() {
  local build batch
  for build in tlpre tlmain; do
    for batch in 80 96; do
      build-$build/bin/mlalab bench --layout v4 --heads 16 --batch "$batch" --split fixed:1 \
        --variant wgmma_h16_t64_w4_s2 --timeline "$out/timeline_${build}_b$batch.json" ||
        return 1
      xz -f "$out/timeline_${build}_b$batch.json"
    done
  done
}
export -f timelines
export out
step timelines bash -c timelines
exit $status
