#!/bin/bash
# Session 42's second H200 call (needs_h200), carry ["build-d/land55bin.txz",
# "build-d/pre55bin.txz", "build-d/b96a.txz", "build-d/b96b.txz"]: halves-v4.toml, then
# halves-v3.toml (version 55's two halves, each alone, against the build before it and main).
# Writes $OUT/halves.tar.gz.
export MLALAB_STOP_AT=$(( $(date +%s) + 560 ))
source scripts/session_steps.sh
session_folder halves
unpack_builds land55bin pre55bin b96a b96b || exit 1
info_step
R=docs/results/2026-12-06-b96
step ab_halves-v4 timeout 300 build-land55bin/bin/mlalab ab $R/halves-v4.toml --out "$out/halves-v4"
step ab_halves-v3 timeout 230 build-land55bin/bin/mlalab ab $R/halves-v3.toml --out "$out/halves-v3"
exit $status
