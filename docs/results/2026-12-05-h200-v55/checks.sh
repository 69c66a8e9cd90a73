#!/bin/bash
# Session 39's checks call (any Hopper card): version 55's landing checks (land.sh checks: the
# full build's GPU tests and sanitizers), then the timeline build's own GPU test (its frees are
# now recorded before their arrivals; session 38's fix, not yet run on a GPU) and the clocks
# under sustained load with the landing build (scripts/session_steps.sh sustained_clocks).
# Carry ["build-d/land55.txz", "build-d/tl.txz"]. Writes $OUT/land55-checks.tar.gz and
# $OUT/extra.tar.gz.
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 570 ))}"
export MLALAB_STOP_AT
bash docs/results/2026-12-05-timeline-clock/land.sh checks
source scripts/session_steps.sh
session_folder extra
unpack_builds tl || exit 1
info_step
step timeline_gpu_test build-tl/tests/mlalab_gpu_tests --gtest_filter='RunCudaBench.ATimeline*'
sustained_clocks build-land55
exit $status
