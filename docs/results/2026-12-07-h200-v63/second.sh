#!/bin/bash
# A device call, carry ["build-d/base60.txz", "build-d/headbin.txz", "build-d/launch_floor",
# "build-d/hack.txz"] (prepare.sh builds them), in the order of what a user misses most: both
# mixed-length tables of ../2026-12-01-h200-mixed-tuning/ re-tuned with main's kernels (theirs
# date from e4edff6, so a Dispatcher refuses them); versions 60 and 63 against the build before
# them in the lab (../2026-12-06-l2-promotion/h16.toml and h128.toml: base60 = main at e610732,
# 90a, the two variants they time; headbin = main's full build, bin/mlalab alone); then
# ../2026-12-07-launch-floor/run.sh (the floor with its unsplit rows, the swapped kernel's bench
# split and unsplit, what its split costs). Each part is bounded on its own (150, 290 and 120
# s). On any other card it stops at once (exit 3): the H100's floor, split costs and mixed-
# length tables are measured already (../2026-12-07-launch-floor/h100/, and
# ../2026-12-07-h100-tables/, tuned by gpu_session.sh's tune_mixed in session 53). Writes
# $OUT/h200-mixed-tables.tar.gz, $OUT/v60-ab.tar.gz and $OUT/launch-floor.tar.gz.
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader)
if [[ $gpu != *H200* ]]; then
  echo "not an H200: $gpu; nothing to do" >&2
  exit 3
fi
(
  source scripts/session_steps.sh
  unpack_builds headbin || exit 1
  MLALAB_STOP_AT=$(( $(date +%s) + 150 )) MLALAB_ARCHIVE_DIR=$OUT \
    bash scripts/gpu_session.sh build-headbin /tmp/mlalab-session/h200-mixed-tables info tune_mixed
)
tables_status=$?
MLALAB_LAND_BUILD=headbin MLALAB_LAND_STAGES= MLALAB_CALL_SECONDS=290 \
  bash docs/results/2026-12-06-l2-promotion/ab-and-targets.sh
ab_status=$?
MLALAB_HEAD=headbin MLALAB_CALL_SECONDS=120 bash docs/results/2026-12-07-launch-floor/run.sh
floor_status=$?
exit $(( tables_status || ab_status || floor_status ))
