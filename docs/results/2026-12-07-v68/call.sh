#!/bin/bash
# Versions 69, 68 and 67 (a) measured for landing, carry ["build-d/v69s.txz",
# "build-d/v68s.txz", "build-d/headbin.txz", "build-d/tl69.txz"] (~15 MB: the tree and a call's
# builds share 64 MiB; README: how each is built). v69s is version 69 (on 68, on 67 (a)) with
# the three variants the call times and the GPU tests; v68s is 68's 64-head variant. First
# 69's correctness (68's merge is 69's but for the final stores): the decode sweep of the two
# 64-head variants the tables use (every split policy: fixed:2 runs the pairs), memcheck and
# synccheck of the pairs. Then the labs: h128.toml (main against 68), h128-stores.toml (68
# against 69), the pairs' timeline at batch 32 (69's merge steps; main's, on an H100, are in
# ../2026-12-07-pairs-timeline/h100-run3-v63/), and on the H200 version 67 (a)'s lab
# (../2026-12-07-v67/h16.toml, run by v69s: its swapped kernels' .text is 67 (a)'s, byte for
# byte). On the H200 each lab's landing rule, written in perf-notes before the run
# (scripts/lab_decision.py), decides, and $out/landing.txt names the full build to land with
# `scripts/land_kernel_change.sh NAME tune` in the next call (carry ["build-d/NAME.txz"]), or
# none. Writes $OUT/v68.tar.gz; MLALAB_CALL_SECONDS (default 570) bounds the call.
source scripts/session_steps.sh
begin_call v68 v69s v68s headbin tl69 || exit 1
R=docs/results/2026-12-07-v68
change_checks build-v69s '^(wgmma_h64_t64_w8_s2|wgmma_h64_t32_w8_s4)$' \
  '^wgmma_h64_t64_w8_s2$' '^wgmma_h64_t32_w8_s4$'
correct=$status
step ab_h128 timeout 130 build-v68s/bin/mlalab ab $R/h128.toml --out "$out/h128"
step ab_h128_stores timeout 130 build-v69s/bin/mlalab ab $R/h128-stores.toml \
  --out "$out/h128_stores"
step timeline_b32 timeout 60 build-tl69/bin/mlalab bench --heads 128 --context 4096 \
  --variant wgmma_h64_t64_w8_s2 --backend cuda --batch 32 --timeline "$out/tl69-b32.json"
on_h200 || exit $status
step ab_h16 timeout 130 build-v69s/bin/mlalab ab docs/results/2026-12-07-v67/h16.toml \
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
  landing="none yet: v68, after its own sweep (69's ran here)"
elif [ -n "$v67" ]; then landing=v67
else landing=none  # 68 or 69 without (a) would need builds without it
fi
echo "landing: $landing" | tee "$out/landing.txt"
pack
exit $status
