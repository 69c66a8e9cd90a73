#!/bin/bash
# One H200 call for two questions (needs_h200), carry ["build-d/base60.txz", "build-d/land60.txz",
# "build-d/v61.txz"]: version 60's lab A/B (../2026-12-06-l2-promotion/: main against main without
# L2 promotion; its tables and targets are left for the call after a win), then version 61's
# checks and lab (h100.sh's steps: the GPU tests, memcheck and synccheck of the _merge
# variants, merge-v3.toml). Writes $OUT/v60-ab.tar.gz and $OUT/v61.tar.gz.
export MLALAB_STOP_AT=$(( $(date +%s) + ${MLALAB_CALL_SECONDS:-560} ))
source scripts/session_steps.sh
session_folder v60-ab
unpack_builds base60 land60 v61 || exit 1
info_step
R=docs/results/2026-12-06-l2-promotion
step ab_h16 timeout 110 build-land60/bin/mlalab ab $R/h16.toml --out "$out/h16"
step ab_h128 timeout 90 build-land60/bin/mlalab ab $R/h128.toml --out "$out/h128"
v60_status=$status
bash docs/results/2026-12-06-v61/h100.sh || status=1
[ "$v60_status" -ne 0 ] && status=1
exit $status
