#!/bin/bash
# Versions 70 and 68 labs again on one Hopper card (session 56), to tell the code's effects from
# a run's: carry ["build-d/v70t.txz", "build-d/v68t.txz", "build-d/headbin.txz"]. Writes
# $OUT/replication.tar.gz.
source scripts/session_steps.sh
begin_call replication v70t v68t headbin || exit 1
step ab_v70 timeout 150 build-v70t/bin/mlalab ab docs/results/2026-12-07-v70/h128.toml \
  --out "$out/v70"
step ab_v68 timeout 150 build-v68t/bin/mlalab ab docs/results/2026-12-07-v68/h128.toml \
  --out "$out/v68"
pack
