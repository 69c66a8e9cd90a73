#!/bin/bash
# The device call (an H100 or an H200): carry ["build-d/tile_pattern", "build-d/land59.txz"] (the binary built from
# tile_pattern.cu as its header says, with -Xcompiler -static-libstdc++,-static-libgcc; and a
# full build, for the kernels' own figures in the same run). Writes $OUT/{info,pattern}.log
# and $OUT/bench_*.log.
set -u
out=${OUT:-/tmp/tile-pattern}
mkdir -p "$out"
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version \
    --format=csv; } > "$out/info.log"
cat "$out/info.log"
timeout 150 build-d/tile_pattern 2>&1 | tee "$out/pattern.log"
[ -x build-land59/bin/mlalab ] || { mkdir -p build-land59 && tar -xJf build-d/land59.txz -C build-land59; }
# The H = 16 kernels at the targets' batches (V3, page 64, 4,096 tokens), with the streaming
# read of the same run.
for batch in 32 64 128; do
  timeout 60 build-land59/bin/mlalab bench --heads 16 --batch $batch --context 4096 \
    --variant wgmma_h16_t64_w4_s2,wgmma_h64_t32_w8_s4 > "$out/bench_h16_b$batch.log" 2>&1
  tail -n 12 "$out/bench_h16_b$batch.log"
done
