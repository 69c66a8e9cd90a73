#!/bin/bash
# Version 67 (a)'s landing on the H200 in one call, carry ["build-d/v67.txz",
# "build-d/headbin.txz"] (builds: ../2026-12-07-v68/README.md, "Next"; v67 is every variant
# with (a), binaries only). Its lab (../2026-12-07-v67/h16.toml: main against v67's own
# mlalab), its rule (docs/perf-notes.md, "Version 67", written before any run), and where it
# lands, in the same call, the four H200 tables re-tuned and the targets
# (scripts/land_kernel_change.sh v67 tune, until 585 s after the call's start: the targets come
# last). One call, not two: a device start costs 1.5-3 minutes, and a session's
# device time is 30. Version 68's H200 lab (../2026-12-07-v68/call.sh) waits for a later call.
# Writes $OUT/v67.tar.gz (the lab) and $OUT/v67-tune.tar.gz (the landing).
call_start=$(date +%s)
source scripts/session_steps.sh
MLALAB_CALL_SECONDS=120 begin_call v67 v67 headbin || exit 1
on_h200 || { pack; exit 3; }
step ab_h16 timeout 100 build-v67/bin/mlalab ab docs/results/2026-12-07-v67/h16.toml \
  --out "$out/h16"
if ! lab_decision h16 128; then
  echo "version 67 (a) stays out" | tee "$out/landing.txt"
  pack
  exit "$status"
fi
echo "version 67 (a) lands" | tee "$out/landing.txt"
pack
MLALAB_STOP_AT=$(( call_start + 585 )) bash scripts/land_kernel_change.sh v67 tune
