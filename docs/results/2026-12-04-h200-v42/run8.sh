#!/bin/bash
# Session 27 device call 8: version 42's tables re-tuned --fresh, and the targets.
R=$OUT/r8; mkdir -p $R
mkdir -p build-full/bin bins
tar -xJf build-d27/bins7.txz -C bins
cp bins/new build-full/bin/mlalab
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $R/gpu.csv
B=build-full/bin/mlalab
$B tune --layout v4 --heads 16 --batch 1,2,4,8,16,32,48,64,80,96,128 --context 4096 --fresh --out $R/tuning-v4-h16-p64.json > $R/tune_v4_h16.log 2>&1; echo "tune h16 rc=$?"
$B tune --layout v3 --heads 128 --batch 1,8,16,32,48,64,80,96,128 --context 4096 --fresh --out $R/tuning-v3-h128-p64.json > $R/tune_v3_h128.log 2>&1; echo "tune h128 rc=$?"
timeout 150 python3 bench/targets/hopper_targets.py --mlalab $B --out $R/targets --variants h16_t16_w4_s2,wgmma_h64_t32_w8_s4,wgmma_h64_t64_w8_s2,wgmma_h16_t64_w4_s2,wgmma_h16_t64_w4_s3 > $R/targets.log 2>&1; echo "targets rc=$?"
cd $OUT && tar -czf r8.tgz r8 && rm -rf r8
