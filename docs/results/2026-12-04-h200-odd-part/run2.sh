#!/bin/bash
# Session 28 device call 2: the odd-part lab (b5f1a35 as the baseline) and a bench row.
R=$OUT/r2; mkdir -p $R
mkdir -p build-full/bin build-prev/bin bins
[ -f bins/new ] || tar -xJf build-d28/bins1.txz -C bins
cp bins/new build-full/bin/mlalab; cp bins/prev build-prev/bin/mlalab
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $R/gpu.csv
timeout 200 build-full/bin/mlalab ab experiments/odd-part.toml --max-minutes 3 --out $R/lab > $R/lab-odd-part.log 2>&1; echo "lab rc=$?"
tail -14 $R/lab-odd-part.log
timeout 90 build-full/bin/mlalab bench --heads 128 --batch 8,32,64,128 --context 4032,4096 --variant wgmma_h64_t32_w8_s4,wgmma_h64_t64_w8_s2 --json $R/bench_h128.json > $R/bench_h128.log 2>&1
grep "^| w" $R/bench_h128.log | awk -F'|' '{print $2,$3,$5,$7,$8,$11}'
cd $OUT && tar -czf r2.tgz r2
