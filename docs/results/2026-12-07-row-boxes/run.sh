#!/bin/bash
# The device call (an H100 or an H200): carry ["build-d/row_boxes", "build-d/base60.txz"] (the
# binary built as row_boxes.cu's header says; main's build). Writes $OUT/row-boxes/{info,
# row_boxes}.log and the kernels' page-1 and page-64 bench rows at 128 heads.
set -u
out=${OUT:-/tmp}/row-boxes
mkdir -p "$out"
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.limit,\
driver_version --format=csv; } > "$out/info.log"
cat "$out/info.log"
timeout 120 build-d/row_boxes 2>&1 | tee "$out/row_boxes.log"
[ -x build-base60/bin/mlalab ] ||
  { mkdir -p build-base60 && tar -xJf build-d/base60.txz -C build-base60; }
# The page-1 target's rows (V3, 128 heads, batch 64, 4,096 tokens), both page sizes.
for page in 64 1; do
  timeout 60 build-base60/bin/mlalab bench --heads 128 --batch 64 --context 4096 \
    --page-size $page --variant wgmma_h64_t32_w8_s4,wgmma_h64_t64_w8_s2 \
    > "$out/bench_h128_b64_page$page.log" 2>&1
  tail -n 8 "$out/bench_h128_b64_page$page.log"
done
