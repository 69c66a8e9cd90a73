#!/bin/bash
# What the combine costs at 16 heads, per kernel, under Nsight Compute (any Hopper card): the
# swapped kernel's split launches at batch 1, 8 and 32 (V3, L = 4,096, the split heuristic's
# 32, 16 and 4 splits), each launch's decode and combine kernels timed alone (ncu serializes
# them, so the dependent launch's overlap is not in these figures), SM clock not locked. Why:
# on the H100 the timeline build's last CTA ended 5.4 µs before the end of the call at batch 32,
# 3.0 at batch 8 and 2.8 at batch 1 (../2026-12-05-timeline-clock/h100-run1/), although the
# partial rows to merge are the same 4.2 MB at batch 8 and 32: is that the combine's own time?
# Call with carry ["build-d/land55.txz"] (the full build of main's kernels). Writes
# $OUT/combine.tar.gz.
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 300 ))}"
export MLALAB_STOP_AT
source scripts/session_steps.sh
session_folder combine
unpack_builds land55 || exit 1
info_step
# ncu_bN: caches flushed before each kernel (ncu's default), so the partial rows come from HBM;
# warm_bN: not flushed (--cache-control none), as in a call, where they are in the L2.
for batch in 1 8 32; do
  step "ncu_b$batch" ncu --clock-control none \
    --metrics gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second \
    -k 'regex:swapped_decode|combine' --launch-count 6 --csv --page raw \
    build-land55/bin/mlalab bench --heads 16 --batch "$batch" --context 4096 \
    --variant wgmma_h16_t64_w4_s2 --runs 20
done
for batch in 1 8 32; do
  step "warm_b$batch" ncu --clock-control none --cache-control none \
    --metrics gpu__time_duration.sum -k 'regex:swapped_decode|combine' --launch-count 6 \
    --csv --page raw build-land55/bin/mlalab bench --heads 16 --batch "$batch" \
    --context 4096 --variant wgmma_h16_t64_w4_s2 --runs 20
done
exit $status
