#!/bin/bash
# Session 28 device call 6: version 43 from a full build: both tables re-tuned --fresh, the
# targets, and the GPU tests of every wgmma variant (as far as the time allows).
R=$OUT/r6; mkdir -p $R
mkdir -p build-full/bin build-full/tests bins
tar -xJf build-d28/bins6.txz -C bins
cp bins/new build-full/bin/mlalab; cp bins/newt build-full/tests/mlalab_gpu_tests
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $R/gpu.csv
B=build-full/bin/mlalab
$B tune --layout v4 --heads 16 --batch 1,2,4,8,16,32,48,64,80,96,128 --context 4096 --fresh --out $R/tuning-v4-h16-p64.json > $R/tune_v4_h16.log 2>&1; echo "tune h16 rc=$?"
$B tune --layout v3 --heads 128 --batch 1,8,16,32,48,64,80,96,128 --context 4096 --fresh --out $R/tuning-v3-h128-p64.json > $R/tune_v3_h128.log 2>&1; echo "tune h128 rc=$?"
cd $OUT && tar -czf r6.tgz r6 && cd - > /dev/null
timeout 150 python3 bench/targets/hopper_targets.py --mlalab $B --out $R/targets --variants h16_t16_w4_s2,wgmma_h64_t32_w8_s4,wgmma_h64_t64_w8_s2,wgmma_h16_t64_w4_s2,wgmma_h16_t64_w4_s3 > $R/targets.log 2>&1; echo "targets rc=$?"
cd $OUT && tar -czf r6.tgz r6 && cd - > /dev/null
export MLALAB_TEST_VARIANTS='^wgmma_.*$'
timeout 120 build-full/tests/mlalab_gpu_tests --gtest_filter='Layouts/DecodeSweep.*' > $R/gpu_tests_wgmma.log 2>&1; echo "gpu_tests rc=$?" >> $R/gpu_tests_wgmma.log
grep -E "FAILED  \]|PASSED|rc=" $R/gpu_tests_wgmma.log | tail -6
cd $OUT && tar -czf r6.tgz r6 && rm -rf r6
