#!/bin/bash
# Session 42's first H200 call (needs_h200), carry ["build-d/tlmain.txz", "build-d/tlpre.txz",
# "build-d/land55bin.txz", "build-d/pre55bin.txz"]:
#   1. ../2026-12-06-c80/timeline-b96.sh: the 2-stage swapped kernel's timelines at V4 batch
#      80 and 96 (one split), before version 55 (4dba366) and after (main)
#   2. on the same card, V4 batch 96 (one split, 2 stages) by `mlalab bench` on three seeds and
#      by a single-key `mlalab tune` (that variant's candidates only, seed 1), for each of
#      version 55's full build (land55bin: main's kernels) and the build before it (pre55):
#      whether the re-tune's race (104.1 us, session 40, another H200) and the bench (110.5-
#      112.9 us, session 41) disagree on one machine
# Writes $OUT/timeline-b96.tar.gz and $OUT/b96.tar.gz.
start=$(date +%s)
MLALAB_STOP_AT=$((start + 150)) bash docs/results/2026-12-06-c80/timeline-b96.sh
export MLALAB_STOP_AT=$((start + 540))
source scripts/session_steps.sh
session_folder b96
unpack_builds land55bin pre55bin || exit 1
info_step
bench_seeds() {
  local seed build
  for seed in 1 2 3; do
    for build in pre55bin land55bin; do
      echo "== $build seed $seed"
      build-$build/bin/mlalab bench --layout v4 --heads 16 --batch 96 --split fixed:1 \
        --variant wgmma_h16_t64_w4_s2 --seed "$seed" --runs 50 2>&1 | grep "^|.*wgmma"
    done
  done
}
export -f bench_seeds
step bench_seeds bash -c bench_seeds
for build in pre55bin land55bin; do
  step "tune_$build" build-$build/bin/mlalab tune --layout v4 --heads 16 --batch 96 \
    --context 4096 --candidates wgmma_h16_t64_w4_s2 --fresh --out "$out/tune_$build.json"
  step "explain_$build" build-$build/bin/mlalab tune --layout v4 --heads 16 \
    --out "$out/tune_$build.json" --explain 96,4096
done
step bench_again bash -c bench_seeds
exit $status
