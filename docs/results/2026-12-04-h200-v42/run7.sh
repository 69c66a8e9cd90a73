#!/bin/bash
# Session 27 device call 7: version 42 (the t64 pair order) from the full build: GPU tests of
# the t64 variants, memcheck/synccheck, the lab against 8bf4510 (lockstep), bench t32 vs t64.
R=$OUT/r7; mkdir -p $R
mkdir -p build-full/bin build-full/tests build-prev/bin bins
tar -xJf build-d27/bins7.txz -C bins
cp bins/new build-full/bin/mlalab; cp bins/newt build-full/tests/mlalab_gpu_tests; cp bins/prev build-prev/bin/mlalab
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $R/gpu.csv
export MLALAB_TEST_VARIANTS='^wgmma_h64_t64_.*$'
timeout 120 build-full/tests/mlalab_gpu_tests > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?" >> $R/gpu_tests.log
grep -E "FAILED  \]|PASSED|rc=" $R/gpu_tests.log | tail -6
export MLALAB_TEST_VARIANTS='^wgmma_h64_t64_w8_s2$'
export MLALAB_TEST_CASES='^(b3_h64_p64|b3_h128_long_p64|all_lengths_h16_p64)$'
timeout 80 compute-sanitizer --tool memcheck --error-exitcode 1 build-full/tests/mlalab_gpu_tests --gtest_filter='Layouts/DecodeSweep.*' > $R/memcheck.log 2>&1; echo "memcheck rc=$?" >> $R/memcheck.log
timeout 60 compute-sanitizer --tool synccheck --error-exitcode 1 build-full/tests/mlalab_gpu_tests --gtest_filter='Layouts/DecodeSweep.*' > $R/synccheck.log 2>&1; echo "synccheck rc=$?" >> $R/synccheck.log
unset MLALAB_TEST_VARIANTS MLALAB_TEST_CASES
tail -n 2 $R/memcheck.log $R/synccheck.log
timeout 170 build-full/bin/mlalab ab experiments/pair-order.toml --max-minutes 2.5 --out $R/lab > $R/lab-pair-order.log 2>&1; echo "lab rc=$?"
tail -14 $R/lab-pair-order.log
timeout 60 build-full/bin/mlalab bench --heads 128 --batch 8,32,64,128 --context 4096 --variant wgmma_h64_t32_w8_s4,wgmma_h64_t64_w8_s2 --json $R/bench_h128.json > $R/bench_h128.log 2>&1
grep "^| w" $R/bench_h128.log | awk -F'|' '{print $2,$3,$7,$8,$11}'
cd $OUT && tar -czf r7.tgz r7 && rm -rf r7
