#!/bin/bash
# Version 67 (a) on the H200, carry ["build-d/v67.txz", "build-d/headbin.txz"] (v67: the build
# without (b), as run.sh says). The lab h16.toml, main against the change; then the rule
# perf-notes wrote before this run decides: batch 128's interval above 0 and no point SLOWER or
# a negative small change lands it, and the same call goes on with
# `scripts/land_kernel_change.sh v67 tune` (both equal-length tables, the targets, both
# mixed-length tables, each stage bounded by what is left of the call). On any other card it
# stops at once (exit 3): the H100's lab is run.sh's. Writes $OUT/v67-h200.tar.gz and
# $OUT/v67-tune.tar.gz.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
if [[ $gpu != *H200* ]]; then
  echo "not an H200: $gpu; nothing to do" >&2
  exit 3
fi
source scripts/session_steps.sh
begin_call v67-h200 v67 headbin || exit 1
R=docs/results/2026-12-07-v67
step ab_h16 timeout 130 build-v67/bin/mlalab ab $R/h16.toml --out "$out/h16"
results=$(ls -d "$out"/h16/v67-h16-*/ 2>/dev/null | tail -n 1)results.json
step decision python3 - "$results" <<'PY'
import json, sys
points = json.load(open(sys.argv[1]))["analysis"]["variants"][0]["points"]
lands = True
for point in points:
    change = point["change"]
    print(f"C{point['concurrency']}: {change['change_pct']:+.2f} % "
          f"[{change['lower_pct']:+.2f}, {change['upper_pct']:+.2f}] {point['verdict']}")
    if point["verdict"] == "SLOWER" or (point["verdict"] == "SMALL_CHANGE" and
                                        change["change_pct"] < 0):
        lands = False
    if point["concurrency"] == 128 and not change["lower_pct"] > 0:
        lands = False
print("lands" if lands else "stays out")
sys.exit(0 if lands else 1)
PY
[ "$status" -eq 0 ] || exit 1
# MLALAB_LAND=0: the lab and its decision alone (a call with too little device time left for
# the landing's ~9 minutes).
[ "${MLALAB_LAND:-1}" = 1 ] || exit 0
bash scripts/land_kernel_change.sh v67 tune
