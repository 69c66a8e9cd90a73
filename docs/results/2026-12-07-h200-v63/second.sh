#!/bin/bash
# The session's second device call, carry ["build-d/base60.txz", "build-d/headbin.txz",
# "build-d/launch_floor", "build-d/hack.txz"] (prepare.sh builds them). On an H200: versions
# 60 and 63 against the build before them in the lab (../2026-12-06-l2-promotion/h16.toml and
# h128.toml: base60 = main at e610732, 90a, the two variants they time; headbin = main's full
# build, bin/mlalab alone); the launch floor again with its unsplit rows, the swapped kernel
# unsplit at batch 32 and 64, and what its split costs (../2026-12-07-launch-floor/
# split_cost.sh); then both mixed-length tables of ../2026-12-01-h200-mixed-tuning/ re-tuned
# (theirs date from e4edff6). On any other card: ../2026-12-07-launch-floor/run.sh (the floor,
# the bench, the split's cost on that card). Writes $OUT/v60-ab.tar.gz and
# $OUT/h200-second.tar.gz (or $OUT/launch-floor.tar.gz).
if ! nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  MLALAB_HEAD=headbin exec bash docs/results/2026-12-07-launch-floor/run.sh
fi
MLALAB_LAND_BUILD=headbin MLALAB_LAND_STAGES= MLALAB_CALL_SECONDS=290 \
  bash docs/results/2026-12-06-l2-promotion/ab-and-targets.sh
ab_status=$?
source scripts/session_steps.sh
export MLALAB_STOP_AT=$(( $(date +%s) + 260 ))
session_folder h200-second
unpack_builds hack
step floor build-d/launch_floor
step bench_h16_unsplit build-headbin/bin/mlalab bench --heads 16 --batch 32,64 --context 4096 \
  --variant wgmma_h16_t64_w4_s2 --split fixed:1 --json "$out/bench_h16_unsplit.json"
source docs/results/2026-12-07-launch-floor/split_cost.sh
for heads in 128 16; do
  step "tune_mixed_h$heads" build-headbin/bin/mlalab tune --layout v3 --heads "$heads" \
    --batch 8,64,128 --context 8192 --lengths uniform:0.125 --fresh \
    --out "$out/tuning-v3-h$heads-p64-mixed.json"
done
exit $(( status || ab_status ))
