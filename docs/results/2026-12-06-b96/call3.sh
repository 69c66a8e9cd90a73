#!/bin/bash
# Session 42's third call (needs_h200), carry ["build-d/land55bin.txz", "build-d/pre55bin.txz"]:
# how wide the batch range is where the 2-stage swapped kernel before version 55 beats main's
# (V4, 16 heads, one split, `mlalab bench`, batch 64-128 in steps of 8, seed 1; each build
# twice, alternated). Writes $OUT/b96-range.tar.gz.
export MLALAB_STOP_AT=$(( $(date +%s) + 200 ))
source scripts/session_steps.sh
session_folder b96-range
unpack_builds land55bin pre55bin || exit 1
info_step
for round in 1 2; do  # alternated, so drift between the builds shows
  for build in pre55bin land55bin; do
    step "bench_${build}_$round" build-$build/bin/mlalab bench --layout v4 --heads 16 \
      --batch 64,72,80,88,96,104,112,120,128 --split fixed:1 --variant wgmma_h16_t64_w4_s2 \
      --runs 30 --json "$out/bench_${build}_$round.json"
  done
done
exit $status
