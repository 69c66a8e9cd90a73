#!/bin/bash
# The device call (carry ["build-d/land.txz"]: version 50's full build, for the kernel's own
# figures beside the ceiling). Writes $OUT/l2.log and $OUT/ncu_*.log.
set -u
out=${OUT:-/tmp/l2-ceiling}
mkdir -p "$out"
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version \
    --format=csv; } > "$out/info.log"
nvcc -std=c++20 -O3 -gencode=arch=compute_90a,code=sm_90a -Isrc -o /tmp/l2_ceiling \
  docs/results/2026-12-05-l2-ceiling/l2_ceiling.cu || exit 1
timeout 180 /tmp/l2_ceiling 2>&1 | tee "$out/l2.log"
# The 128-head kernel at batch 128 and 64 (the variant the tables serve), at the GPU's own
# clocks: bytes from L2 into the SMs, L2 and DRAM throughput, duration.
[ -x build-land/bin/mlalab ] || { mkdir -p build-land && tar -xJf build-d/land.txz -C build-land; }
metrics=l1tex__m_xbar2l1tex_read_bytes.sum.per_second,lts__t_bytes.sum.per_second
metrics+=,dram__bytes_read.sum.per_second,gpu__time_duration.sum
for batch in 128 64; do
  timeout 240 ncu --clock-control none --kernel-name regex:decode_kernel --launch-skip 3 \
    --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis --metrics $metrics \
    build-land/bin/mlalab bench --heads 128 --batch $batch --context 4096 \
    --variant wgmma_h64_t64_w8_s2 > "$out/ncu_h128_b$batch.log" 2>&1
  grep -E "xbar2l1tex|lts__t_bytes|dram__bytes|duration|Throughput|Hit Rate" \
    "$out/ncu_h128_b$batch.log"
done
