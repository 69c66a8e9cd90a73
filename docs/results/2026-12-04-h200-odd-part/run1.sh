#!/bin/bash
# Session 28 device call 1: the odd-part fix (3e4db41) from a full build: GPU tests of the t64
# variants, memcheck/synccheck, the lab against b5f1a35, bench t32 vs t64, both tables re-tuned.
R=$OUT/r1; mkdir -p $R
mkdir -p build-full/bin build-full/tests build-prev/bin bins
tar -xJf build-d28/bins1.txz -C bins
cp bins/new build-full/bin/mlalab; cp bins/newt build-full/tests/mlalab_gpu_tests; cp bins/prev build-prev/bin/mlalab
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $R/gpu.csv
B=build-full/bin/mlalab
$B tune --layout v4 --heads 16 --batch 1,2,4,8,16,32,48,64,80,96,128 --context 4096 --fresh --out $R/tuning-v4-h16-p64.json > $R/tune_v4_h16.log 2>&1; echo "tune h16 rc=$?"
$B tune --layout v3 --heads 128 --batch 1,8,16,32,48,64,80,96,128 --context 4096 --fresh --out $R/tuning-v3-h128-p64.json > $R/tune_v3_h128.log 2>&1; echo "tune h128 rc=$?"
export MLALAB_TEST_VARIANTS='^wgmma_h64_t64_.*$'
timeout 120 build-full/tests/mlalab_gpu_tests > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?" >> $R/gpu_tests.log
grep -E "FAILED  \]|PASSED|rc=" $R/gpu_tests.log | tail -6
export MLALAB_TEST_VARIANTS='^wgmma_h64_t64_w8_s2$'
export MLALAB_TEST_CASES='^(b3_h64_p64|b3_h128_long_p64|all_lengths_h16_p64)$'
timeout 80 compute-sanitizer --tool memcheck --error-exitcode 1 build-full/tests/mlalab_gpu_tests --gtest_filter='Layouts/DecodeSweep.*' > $R/memcheck.log 2>&1; echo "memcheck rc=$?" >> $R/memcheck.log
timeout 60 compute-sanitizer --tool synccheck --error-exitcode 1 build-full/tests/mlalab_gpu_tests --gtest_filter='Layouts/DecodeSweep.*' > $R/synccheck.log 2>&1; echo "synccheck rc=$?" >> $R/synccheck.log
unset MLALAB_TEST_VARIANTS MLALAB_TEST_CASES
tail -n 2 $R/memcheck.log $R/synccheck.log
cd $OUT && tar -czf r1.tgz r1
