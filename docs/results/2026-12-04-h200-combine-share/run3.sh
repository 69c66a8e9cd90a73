#!/bin/bash
# Session 30, device call 6: what the combine of a balanced launch at 128 heads waits on, and
# what bounds page 1 (every tile by cp.async) at 128 heads: Nsight Compute sections of one
# kernel each, version 44's full build (af19b87's kernels).
R=$OUT/c3; mkdir -p $R
mkdir -p bins && tar -xJf build-d32/bins.txz -C bins
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,driver_version --format=csv > $R/gpu.csv
S="--section SpeedOfLight --section MemoryWorkloadAnalysis --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats"
timeout 120 ncu --cache-control none --kernel-name regex:combine --launch-skip 2 --launch-count 1 $S \
  bins/mlalab bench --heads 128 --batch 64 --context 8192 --lengths uniform:0.125 --split balanced \
  --variant wgmma_h64_t64_w8_s2 > $R/ncu_combine_mixed.txt 2>&1; echo "combine rc=$?"
for v in wgmma_h64_t32_w8_s4 wgmma_h64_t64_w8_s2; do
  timeout 120 ncu --kernel-name regex:decode_kernel --launch-skip 3 --launch-count 1 $S \
    bins/mlalab bench --heads 128 --batch 64 --context 4096 --page-size 1 --variant $v > $R/ncu_page1_$v.txt 2>&1
  echo "page1 $v rc=$?"
done
timeout 120 ncu --kernel-name regex:decode_kernel --launch-skip 3 --launch-count 1 $S \
  bins/mlalab bench --heads 128 --batch 64 --context 4096 --variant wgmma_h64_t32_w8_s4 > $R/ncu_page64_wgmma_h64_t32_w8_s4.txt 2>&1
echo "page64 t32 rc=$?"
for f in $R/ncu_*.txt; do echo "== $f"; grep -E "Duration|Elapsed Cycles|DRAM Throughput|L2 Hit Rate|Issued Warp|No Eligible|Warp Cycles Per Issued|Registers Per|Achieved Occupancy|Mem Busy" $f | sed 's/  */ /g' | head -12; done
(cd $OUT && tar -czf c3.tgz c3)
