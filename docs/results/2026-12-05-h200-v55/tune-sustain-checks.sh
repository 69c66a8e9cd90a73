#!/bin/bash
# Session 40's one H200 call for version 55, in order of need: the re-tune of both equal-length
# tables and issue 12's targets (land.sh tune: what landing needs an H200 for), the clocks and
# power under ~7 s of sustained load with the landing build (does the H200 run 128 heads at its
# power cap, as the H100 does?), then land.sh checks (any Hopper card would do; cut short by
# MLALAB_STOP_AT if the call runs out). Carry ["build-d/land55.txz"] (the full build).
# Writes $OUT/land55-tune.tar.gz, $OUT/sustained.tar.gz, $OUT/land55-checks.tar.gz.
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 585 ))}"
export MLALAB_STOP_AT
L=docs/results/2026-12-05-timeline-clock/land.sh
bash $L tune 2>&1 | tail -n 24
(
  source scripts/session_steps.sh
  session_folder sustained
  info_step
  sustained_clocks build-land55
)
bash $L checks 2>&1 | tail -n 30
