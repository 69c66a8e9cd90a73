#!/bin/bash
# Session 30, device call 4: as run1.sh (whose ncu flushed the caches before every kernel and
# profiled the bandwidth probe first), with the caches left as the replay leaves them
# (--cache-control none) and only the decode and combine kernels, three pairs each.
R=$OUT/c2; mkdir -p $R
mkdir -p bins && tar -xJf build-d30/bins5.txz -C bins
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,driver_version --format=csv > $R/gpu.csv
M="--metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,launch__grid_size"
prof() {  # prof NAME BENCH-ARGS...
  local name=$1; shift
  timeout 100 ncu --clock-control none --cache-control none --kernel-name regex:'decode_kernel|combine' \
    --launch-skip 4 --launch-count 6 $M \
    bins/mlalab bench --heads 128 --batch 64 --variant wgmma_h64_t64_w8_s2 "$@" > $R/$name.txt 2>&1
  echo "$name rc=$?"; grep -E "^  [a-z_]+.*\(|gpu__time_duration|dram__bytes_read|hit_rate" $R/$name.txt | cut -c1-90 | head -24
}
prof mixed_balanced --context 8192 --lengths uniform:0.125 --split balanced
prof equal_balanced --context 4608 --split balanced
(cd $OUT && tar -czf c2.tgz c2)
