#!/bin/bash
# The lab's heat on a GPU: burst-h128.toml (no heat) then heat-h128.toml (300 ms of each arm's
# own load before every sample), the same two 128-head variants; any Hopper card. Built here:
#   MLALAB_VARIANTS='^(wgmma_h64_t64_w8_s2|wgmma_h64_t32_w8_s4)$' MLALAB_CUDA_ARCHS=90a \
#     bash scripts/build.sh build-heat
#   bash scripts/pack_build.sh build-heat build-d/heat.txz
# Call with carry ["build-d/heat.txz"]. Writes $OUT/heat.tar.gz.
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 540 ))}"
export MLALAB_STOP_AT
R=docs/results/2026-12-06-heat
source scripts/session_steps.sh
session_folder heat
unpack_builds heat || exit 1
info_step
step ab_burst timeout 200 build-heat/bin/mlalab ab $R/burst-h128.toml --out "$out/ab"
step ab_heat timeout 260 build-heat/bin/mlalab ab $R/heat-h128.toml --out "$out/ab"
exit $status
