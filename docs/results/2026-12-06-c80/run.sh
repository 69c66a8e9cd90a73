#!/bin/bash
# One call on any Hopper card (~9 min): version 55 at batch 64-96 on the 16-head swapped
# variants (README.md), then version 55's landing checks (land.sh checks: the full build's GPU
# tests and sanitizers, not yet run on this build). "This build" of the two experiments is
# build-land55 (the full build of the landed kernels: its swapped variants' code hashes are
# main's since version 55); the one before is build-pre55, made here from the commit before
# version 55 landed (4dba366) with MLALAB_CUDA_ARCHS=90a
# MLALAB_VARIANTS='^wgmma_h16_t64_w4_s(2|3)$' and packed as build-d/pre55.txz
# (scripts/pack_build.sh). Call with carry ["build-d/land55.txz", "build-d/pre55.txz"].
# Writes $OUT/c80.tar.gz and $OUT/land55-checks.tar.gz.
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 570 ))}"
export MLALAB_STOP_AT
R=docs/results/2026-12-06-c80
(
  source scripts/session_steps.sh
  session_folder c80
  unpack_builds land55 pre55 || exit 1
  info_step
  step ab_s3 timeout 120 build-land55/bin/mlalab ab $R/swapped-s3.toml --out "$out/ab"
  step ab_s2 timeout 120 build-land55/bin/mlalab ab $R/swapped-s2.toml --out "$out/ab"
)
bash docs/results/2026-12-05-timeline-clock/land.sh checks 2>&1 | tail -n 40
