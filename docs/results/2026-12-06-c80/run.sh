#!/bin/bash
# Two calls on an H200 (any Hopper card for the checks), chained:
#   bash docs/results/2026-12-06-c80/run.sh races   (~5 min: version 55 against the build before
#        it at C64-C96 on both swapped variants at V4, and at C1-C128 at V3, README.md)
#   bash docs/results/2026-12-06-c80/run.sh checks  (~6 min: version 55's landing checks,
#        land.sh checks: the full build's GPU tests and sanitizers, not yet run on this build)
# "This build" of the experiments is build-land55 (the full build of the landed kernels: its
# swapped variants' code hashes are main's since version 55); the one before is build-pre55,
# made here from the commit before version 55 landed (4dba366) with MLALAB_CUDA_ARCHS=90a
# MLALAB_VARIANTS='^wgmma_h16_t64_w4_s(2|3)$' and packed as build-d/pre55.txz
# (scripts/pack_build.sh). Call with carry ["build-d/land55.txz", "build-d/pre55.txz"].
# Writes $OUT/c80.tar.gz or $OUT/land55-checks.tar.gz.
stage=${1:?races or checks}
R=docs/results/2026-12-06-c80
case "$stage" in
  races)
    : "${MLALAB_STOP_AT:=$(( $(date +%s) + 560 ))}"
    export MLALAB_STOP_AT
    source scripts/session_steps.sh
    session_folder c80
    unpack_builds land55 pre55 || exit 1
    info_step
    for name in swapped-s3 swapped-s2 swapped-s2-low; do
      step "ab_$name" timeout 170 build-land55/bin/mlalab ab "$R/$name.toml" --out "$out/$name"
    done
    exit $status
    ;;
  checks) exec bash docs/results/2026-12-05-timeline-clock/land.sh checks ;;
  *) echo "run.sh: races or checks, not '$stage'" >&2; exit 2 ;;
esac
