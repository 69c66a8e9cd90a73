#!/bin/bash
# Versions 68 and 67 (a) on the H200, for landing, carry ["build-d/v68t.txz",
# "build-d/headbin.txz"] (~9 MB: the tree and a call's builds share 64 MiB; README: how each is
# built). v68t is version 68 (on 67 (a)) with the three variants the call times and the GPU
# tests. First 68's correctness: the decode sweep of the two 64-head variants the tables use
# (every split policy: fixed:2 runs the pairs), memcheck and synccheck of the pairs. Then the
# labs: h128.toml (main against 68) and ../2026-12-07-v67/h16.toml (main against 67 (a), run by
# v68t: its swapped kernels' .text is (a)'s, byte for byte). Each lab's landing rule, written in
# perf-notes before the run (scripts/lab_decision.py), decides, and $out/landing.txt names the
# full build to land with `scripts/land_kernel_change.sh NAME tune` in the next call (carry
# ["build-d/NAME.txz"]), or none. On another card it stops after 68's lab: the rules are the
# H200's. Writes $OUT/v68.tar.gz; MLALAB_CALL_SECONDS (default 570) bounds the call.
source scripts/session_steps.sh
begin_call v68 v68t headbin || exit 1
change_checks build-v68t '^(wgmma_h64_t64_w8_s2|wgmma_h64_t32_w8_s4)$' \
  '^wgmma_h64_t64_w8_s2$' '^wgmma_h64_t32_w8_s4$'
correct=$status
step ab_h128 timeout 130 build-v68t/bin/mlalab ab docs/results/2026-12-07-v68/h128.toml \
  --out "$out/h128"
on_h200 || exit $status
step ab_h16 timeout 130 build-v68t/bin/mlalab ab docs/results/2026-12-07-v67/h16.toml \
  --out "$out/h16"
lab_decision h16 128 && v67=lands || v67=
lab_decision h128 32 && [ "$correct" -eq 0 ] && v68=lands || v68=
if [ -n "$v67" ] && [ -n "$v68" ]; then landing=v68
elif [ -n "$v67" ]; then landing=v67
else landing=none  # 68 without (a) would need a build without it
fi
echo "landing: $landing" | tee "$out/landing.txt"
pack
exit $status
