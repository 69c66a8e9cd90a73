#!/bin/bash
# Session 28 device call 8: Nsight Compute of version 43's 64-token pair order at H = 128,
# B = 64, L = 4096 (one split): where the 10 % to 650 TFLOP/s goes.
R=$OUT/r8; mkdir -p $R bins
tar -xJf build-d28/bins6.txz -C bins
ncu --version > $R/ncu_version.txt 2>&1
timeout 300 ncu --kernel-name regex:decode_kernel --launch-skip 3 --launch-count 1 \
  --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
  --section MemoryWorkloadAnalysis --section SchedulerStats --section Occupancy \
  bins/new bench --heads 128 --batch 64 --context 4096 --variant wgmma_h64_t64_w8_s2 > $R/ncu_t64_b64.txt 2>&1
echo "ncu rc=$?"
grep -E "Duration|Throughput|Pipe|Issue Slots|Warp Cycles|Stall|Eligible|No Eligible|Tensor|L2 Hit|DRAM" $R/ncu_t64_b64.txt | head -40
cd $OUT && tar -czf r8.tgz r8 && rm -rf r8
