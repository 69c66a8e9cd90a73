#!/bin/bash
# The second call: the same three launches with main's normal build (the timeline build's
# records slow the balanced kernel far more than the split one: 191.9 µs against 162.9 at mixed
# lengths), timed by `mlalab bench`, and each kernel of one call (the decode, the combine)
# timed alone by Nsight Compute. Carry ["build-d/land60.txz"]. Writes
# $OUT/mixed-normal.tar.gz.
export MLALAB_STOP_AT=$(( $(date +%s) + ${MLALAB_CALL_SECONDS:-300} ))
source scripts/session_steps.sh
session_folder mixed-normal
unpack_builds land60 || exit 1
info_step
mlalab=build-land60/bin/mlalab
common=(--heads 128 --batch 64 --variant wgmma_h64_t64_w8_s2 --backend cuda)
mixed=(--context 8192 --lengths uniform:0.125 --split balanced)
equal_balanced=(--context 4608 --split balanced:66)
equal_split=(--context 4608)
for name in mixed equal_balanced equal_split; do
  declare -n shape=$name
  step "bench_$name" "$mlalab" bench "${common[@]}" "${shape[@]}"
  # The bench's first launches (its check against the reference) are plain ones: each kernel
  # alone, launch 3 on.
  step "ncu_$name" ncu --clock-control none --kernel-name regex:'decode_kernel|combine' \
    --launch-skip 2 --launch-count 4 --section SpeedOfLight "$mlalab" bench "${common[@]}" \
    "${shape[@]}" --runs 20
done
exit $status
