#!/bin/bash
# Session 30, device call 3: how much of a balanced launch at 128 heads is the combine, and
# what bounds page 1. Nsight Compute at the GPU's own clocks (--clock-control none), every
# kernel of two replays: duration and DRAM bytes of the decode and the combine.
R=$OUT/c1; mkdir -p $R
mkdir -p bins && tar -xJf build-d30/bins5.txz -C bins
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,driver_version --format=csv > $R/gpu.csv
M="--metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size"
prof() {  # prof NAME BENCH-ARGS...
  local name=$1; shift
  timeout 100 ncu --clock-control none --launch-skip 20 --launch-count 6 $M \
    bins/mlalab bench --heads 128 --batch 64 --variant wgmma_h64_t64_w8_s2 "$@" > $R/$name.txt 2>&1
  echo "$name rc=$?"; grep -E "^  [a-z_]+.*\(|gpu__time_duration|dram__bytes_(read|write)|grid_size" $R/$name.txt | head -24
}
prof mixed_balanced --context 8192 --lengths uniform:0.125 --split balanced
prof equal_balanced --context 4608 --split balanced
prof equal_split1 --context 4608
prof page1_t64 --context 4096 --page-size 1
(cd $OUT && tar -czf c1.tgz c1)
