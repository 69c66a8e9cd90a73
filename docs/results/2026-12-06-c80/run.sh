#!/bin/bash
# Version 55 at batch 64-96 on the 16-head swapped variants (README.md). Any Hopper card; the
# table in question is the H200's. Built here, each with MLALAB_CUDA_ARCHS=90a and
# MLALAB_VARIANTS='^wgmma_h16_t64_w4_s(2|3)$': build-v55chk from the commit that landed
# version 55, build-pre55 from the one before it; packed with scripts/pack_build.sh as
# build-d/v55chk.txz and build-d/pre55.txz. Call with carry ["build-d/v55chk.txz",
# "build-d/pre55.txz"]. Writes $OUT/c80.tar.gz.
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 300 ))}"
export MLALAB_STOP_AT
R=docs/results/2026-12-06-c80
source scripts/session_steps.sh
session_folder c80
unpack_builds v55chk pre55 || exit 1
info_step
step ab_s3 timeout 130 build-v55chk/bin/mlalab ab $R/swapped-s3.toml --out "$out/ab"
step ab_s2 timeout 130 build-v55chk/bin/mlalab ab $R/swapped-s2.toml --out "$out/ab"
exit $status
