#!/bin/bash
# Versions 69, 68 and 67 (a) measured for landing, carry ["build-d/v69.txz", "build-d/v68.txz",
# "build-d/v67.txz", "build-d/headbin.txz", "build-d/tl69.txz"] (~25 MB; README: how each is
# built; each build holds the ones before it). Correctness of version 69 first (with tests;
# 68's merge is 69's but for the final stores): the decode sweep of the two 64-head variants
# the tables use (every split policy: fixed:2 runs the pairs), memcheck and synccheck of the
# pairs. Then the labs: h128.toml (main against 68), h128-stores.toml (68 against 69), the
# pairs' timeline at batch 32 (69's merge steps; main's, on an H100, are in
# ../2026-12-07-pairs-timeline/h100-run3-v63/), and on the H200 version 67 (a)'s lab too
# (../2026-12-07-v67/h16.toml). On the H200 each lab's landing
# rule, written in perf-notes before the run (scripts/lab_decision.py), decides, and
# $out/landing.txt names the build to land with `scripts/land_kernel_change.sh NAME tune` in the
# next call, or none. Writes $OUT/v68.tar.gz; MLALAB_CALL_SECONDS (default 570) bounds the call.
source scripts/session_steps.sh
begin_call v68 v69 v68 v67 headbin tl69 || exit 1
R=docs/results/2026-12-07-v68
change_checks build-v69 '^(wgmma_h64_t64_w8_s2|wgmma_h64_t32_w8_s4)$' \
  '^wgmma_h64_t64_w8_s2$' '^wgmma_h64_t32_w8_s4$'
correct=$status
step ab_h128 timeout 130 build-v68/bin/mlalab ab $R/h128.toml --out "$out/h128"
step ab_h128_stores timeout 130 build-v69/bin/mlalab ab $R/h128-stores.toml \
  --out "$out/h128_stores"
step timeline_b32 timeout 60 build-tl69/bin/mlalab bench --heads 128 --context 4096 \
  --variant wgmma_h64_t64_w8_s2 --backend cuda --batch 32 --timeline "$out/tl69-b32.json"
on_h200 || exit $status
step ab_h16 timeout 130 build-v67/bin/mlalab ab docs/results/2026-12-07-v67/h16.toml \
  --out "$out/h16"
# decide LAB CONCURRENCY: the rule on the lab's newest results (0: it lands).
decide() {
  local results
  results=$(ls -d "$out/$1"/*/ 2>/dev/null | tail -n 1)results.json
  python3 scripts/lab_decision.py "$results" --gain-at "$2" > "$out/decision_$1.log" 2>&1
  local rc=$?
  cat "$out/decision_$1.log"
  return $rc
}
decide h16 128 && v67=lands || v67=
decide h128 32 && [ "$correct" -eq 0 ] && v68=lands || v68=
decide h128_stores 32 && [ "$correct" -eq 0 ] && v69=lands || v69=
if [ -n "$v67" ] && [ -n "$v68" ] && [ -n "$v69" ]; then landing=v69
elif [ -n "$v67" ] && [ -n "$v68" ]; then
  landing="none yet: v68, after its own sweep (its build here has no tests)"
elif [ -n "$v67" ]; then landing=v67
else landing=none  # 68 or 69 without (a) would need builds without it
fi
echo "landing: $landing" | tee "$out/landing.txt"
pack
exit $status
