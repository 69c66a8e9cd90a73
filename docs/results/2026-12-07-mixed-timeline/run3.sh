#!/bin/bash
# The third call: equal lengths of 4,608 under balanced:64, one part per worker and no cut
# (each worker's share is one sequence), against one split: what the balanced kernel costs
# with no second part and no partial rows. Carry ["build-d/land60.txz"]. Writes
# $OUT/balanced64.tar.gz.
export MLALAB_STOP_AT=$(( $(date +%s) + ${MLALAB_CALL_SECONDS:-200} ))
source scripts/session_steps.sh
session_folder balanced64
unpack_builds land60 || exit 1
info_step
mlalab=build-land60/bin/mlalab
common=(--heads 128 --batch 64 --variant wgmma_h64_t64_w8_s2 --backend cuda --context 4608)
step bench_balanced64 "$mlalab" bench "${common[@]}" --split balanced:64
step bench_split "$mlalab" bench "${common[@]}"
step ncu_balanced64 ncu --clock-control none --kernel-name regex:'decode_kernel|combine' \
  --launch-skip 2 --launch-count 4 --section SpeedOfLight "$mlalab" bench "${common[@]}" \
  --split balanced:64
exit $status
