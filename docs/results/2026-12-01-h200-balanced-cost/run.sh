#!/usr/bin/env bash
# Where the balanced launch's time goes at H = 128 (ncu: each kernel's duration
# and DRAM bytes), equal lengths 4,608, B = 64 and 8, split heuristic against balanced.
O=${OUT:?}/p
mkdir -p $O
tar xzf build-carry/full.tgz
m=build-gpu/bin/mlalab
s=$(date +%s)
el() { echo "$1 rc $2 at $(( $(date +%s) - s )) s"; }
for b in 64 8; do for sp in heuristic balanced; do
timeout 100 ncu --kernel-name regex:'decode_kernel|combine' --launch-skip 4 --launch-count 6 \
  --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
  $m bench --heads 128 --batch $b --context 4608 --variant wgmma_h64_t64_w8_s2 --split $sp --runs 20 > $O/ncu_b${b}_$sp.log 2>&1; el ncu_b${b}_$sp $?
grep -E "decode_kernel|combine|gpu__time|dram__bytes" $O/ncu_b${b}_$sp.log | tail -12
done; done
tar czf $OUT/p.tgz -C $OUT p
