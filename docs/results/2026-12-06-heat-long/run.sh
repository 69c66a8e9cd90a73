#!/bin/bash
# The lab's heat with longer samples: heat-h128.toml (../2026-12-06-heat/, 20-launch samples)
# then heat-long-h128.toml (200) and heat-500-h128.toml (500), the same two 128-head variants,
# each sample after 300 ms of its arm's own load; any Hopper card. Built here from this commit's main:
#   MLALAB_VARIANTS='^(wgmma_h64_t64_w8_s2|wgmma_h64_t32_w8_s4)$' MLALAB_CUDA_ARCHS=90a \
#     bash scripts/build.sh build-heat
#   bash scripts/pack_build.sh build-heat build-d/heat.txz
# Call with carry ["build-d/heat.txz"]. Writes $OUT/heat-long.tar.gz.
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 540 ))}"
export MLALAB_STOP_AT
R=docs/results/2026-12-06-heat-long
source scripts/session_steps.sh
session_folder heat-long
unpack_builds heat || exit 1
info_step
step ab_heat timeout 220 build-heat/bin/mlalab ab docs/results/2026-12-06-heat/heat-h128.toml \
  --out "$out/ab"
step ab_heat_long timeout 260 build-heat/bin/mlalab ab $R/heat-long-h128.toml --out "$out/ab"
step ab_heat_500 timeout 260 build-heat/bin/mlalab ab $R/heat-500-h128.toml --out "$out/ab"
exit $status
