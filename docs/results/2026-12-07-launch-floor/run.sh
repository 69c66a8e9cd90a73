#!/bin/bash
# One device call, carry ["build-d/launch_floor", "build-d/head.txz"]: launch_floor.cu (built
# here as its header says, with -static-libstdc++ -static-libgcc) and, in the same call, the
# swapped kernel's `mlalab bench` at the same batches (main's full sm_90a build with tests,
# scripts/pack_build.sh). On an H200 the same call goes on to what session 51 left for one:
# both equal-length tables re-tuned (the committed ones predate version 63) and issue 12's
# targets with the GPU tests. Writes $OUT/launch-floor.tar.gz (and $OUT/h200-head.tar.gz).
# MLALAB_HEAD names main's build (default head; headbin: its bin/mlalab alone, no H200 stages);
# where build-d/hack.txz was carried, split_cost.sh runs after the bench.
source scripts/session_steps.sh
export MLALAB_STOP_AT=$(( $(date +%s) + ${MLALAB_CALL_SECONDS:-570} ))
session_folder launch-floor
head=${MLALAB_HEAD:-head}
unpack_builds "$head" || exit 1
[ -f build-d/hack.txz ] && unpack_builds hack
info_step
step floor build-d/launch_floor
step bench_h16 "build-$head/bin/mlalab" bench --heads 16 --batch 1,8,32,64,128 --context 4096 \
  --variant wgmma_h16_t64_w4_s2 --json "$out/bench_h16.json"
step bench_h16_unsplit "build-$head/bin/mlalab" bench --heads 16 --batch 32,64 --context 4096 \
  --variant wgmma_h16_t64_w4_s2 --split fixed:1 --json "$out/bench_h16_unsplit.json"
[ -x build-hack/bin/mlalab ] && source docs/results/2026-12-07-launch-floor/split_cost.sh
if [ "$head" = head ] && nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  export MLALAB_PEERS_JSON=docs/results/2026-12-04-h200-v38/peers/peers.json
  export MLALAB_TARGETS_VARIANTS=h16_t16_w4_s2,wgmma_h64_t32_w8_s4,wgmma_h64_t64_w8_s2,\
wgmma_h16_t64_w4_s2,wgmma_h16_t64_w4_s2_whole
  MLALAB_ARCHIVE_DIR=$OUT bash scripts/gpu_session.sh build-head /tmp/mlalab-session/h200-head \
    info tune targets tests
fi
exit $status
