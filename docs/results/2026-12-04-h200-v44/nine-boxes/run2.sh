#!/bin/bash
# Session 29 device call 2: version 44's ring in the 32-token seesaw and the swapped kernel
# (regression labs against d806ff7), and a bench of both 64-head variants at H = 128.
R=$OUT/r2; mkdir -p $R
mkdir -p build-q2/bin build-prev/bin bins
[ -f bins/new ] || tar -xJf build-d29/bins1.txz -C bins
cp bins/new build-q2/bin/mlalab; cp bins/prev build-prev/bin/mlalab
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $R/gpu.csv
for e in regression-h128 regression-swapped; do
  timeout 200 build-q2/bin/mlalab ab experiments/$e.toml --max-minutes 2.5 --out $R/lab > $R/lab-$e.log 2>&1; echo "lab $e rc=$?"
  grep -E "ACCEPTED|REJECTED|INCONCLUSIVE|MIXED|NO_CHANGE" $R/lab-$e.log | tail -2
done
grep -hE "^\| C[0-9]+ .*(FASTER|SLOWER|WITHIN|SMALL|AMBIG)" $R/lab/*/report.md | cut -c1-110
timeout 90 build-q2/bin/mlalab bench --heads 128 --batch 8,32,64,128 --context 4096 --variant wgmma_h64_t32_w8_s4,wgmma_h64_t64_w8_s2 --json $R/bench_h128.json > $R/bench_h128.log 2>&1
grep "^| w" $R/bench_h128.log | awk -F'|' '{print $2,$3,$7,$8,$11}'
cd $OUT && tar -czf r2.tgz r2
