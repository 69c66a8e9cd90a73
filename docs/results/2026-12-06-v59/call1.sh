#!/bin/bash
# Version 59's first device call (an H200: needs_h200), carry ["build-d/land59.txz"] (the full
# build; scripts/land_kernel_change.sh says how it is made): whole-v4.toml and whole-v3.toml
# (the 2-stage swapped kernel, tiles whole against in pieces, one build), then both equal-length
# tables re-tuned (the swapped kernels' code hashes changed with their names; the _whole
# variants join the V4 race). Writes $OUT/v59-ab.tar.gz and $OUT/land59-tune.tar.gz.
export MLALAB_STOP_AT=$(( $(date +%s) + 575 ))
source scripts/session_steps.sh
session_folder v59-ab
unpack_builds land59 || exit 1
info_step
R=docs/results/2026-12-06-v59
step ab_whole-v4 timeout 230 build-land59/bin/mlalab ab $R/whole-v4.toml --out "$out/whole-v4"
step ab_whole-v3 timeout 100 build-land59/bin/mlalab ab $R/whole-v3.toml --out "$out/whole-v3"
MLALAB_ARCHIVE_DIR=$OUT bash scripts/gpu_session.sh build-land59 /tmp/mlalab-session/land59-tune \
  tune || status=1
exit $status
