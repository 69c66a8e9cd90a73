#!/bin/bash
# Version 70 on a Hopper card, carry ["build-d/v70t.txz", "build-d/headbin.txz"] (README: how
# each is built). v70t is version 70 (on 68 and 67 (a)) with the two 64-head variants the
# tables use and the GPU tests. First its correctness: the decode sweep of both (every split
# policy: fixed:2 runs the pair kernel), memcheck and synccheck, and the cluster-occupancy test
# that now asks the pair kernel. Then the lab h128.toml (main against 70) and its landing rule,
# written in perf-notes before the run (scripts/lab_decision.py), whose verdict binds only on
# an H200. Writes $OUT/v70.tar.gz; MLALAB_CALL_SECONDS (default 570) bounds the call.
source scripts/session_steps.sh
begin_call v70 v70t headbin || exit 1
change_checks build-v70t '^(wgmma_h64_t64_w8_s2|wgmma_h64_t32_w8_s4)$' \
  '^wgmma_h64_t64_w8_s2$' '^wgmma_h64_t32_w8_s4$'
step pairs_fit build-v70t/tests/mlalab_gpu_tests --gtest_filter='JudgeHereGpu.*'
correct=$status
step ab_h128 timeout 200 build-v70t/bin/mlalab ab docs/results/2026-12-07-v70/h128.toml \
  --out "$out/h128"
lab_decision h128 32 && [ "$correct" -eq 0 ] && verdict=lands || verdict="stays out"
on_h200 || verdict+=" (not an H200: the rule binds only there)"
echo "version 70: $verdict" | tee "$out/verdict.txt"
pack
exit $status
