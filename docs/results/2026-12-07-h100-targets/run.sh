#!/bin/bash
# Issue 12's targets on whatever card the call gets (session 50: an H100), with main's build:
# carry ["build-d/land60.txz"] (main's kernels and host code since version 60 landed; see
# ../2026-12-06-l2-promotion/README.md). Writes $OUT/h100-targets.tar.gz. No peer table: the
# committed peers were timed on the H200.
export MLALAB_STOP_AT=$(( $(date +%s) + ${MLALAB_CALL_SECONDS:-420} ))
source scripts/session_steps.sh
session_folder h100-targets
unpack_builds land60 || exit 1
info_step
step targets python3 bench/targets/hopper_targets.py --mlalab build-land60/bin/mlalab \
  --out "$out/targets" --variants h16_t16_w4_s2,wgmma_h64_t32_w8_s4,wgmma_h64_t64_w8_s2,\
wgmma_h16_t64_w4_s2,wgmma_h16_t64_w4_s2_whole
exit $status
