#!/bin/bash
# Session 28 device call 5: version 44 (box-by-box landing) from build-q2 against version 43's
# build (two pieces): GPU tests, memcheck/synccheck of the 64-token variant, the lab.
R=$OUT/r5; mkdir -p $R
mkdir -p build-q2/bin build-q2/tests build-prev/bin bins
tar -xJf build-d28/bins5.txz -C bins
cp bins/new build-q2/bin/mlalab; cp bins/newt build-q2/tests/mlalab_gpu_tests; cp bins/prev build-prev/bin/mlalab
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $R/gpu.csv
timeout 170 build-q2/bin/mlalab ab experiments/box-landing.toml --max-minutes 2.5 --out $R/lab > $R/lab-box-landing.log 2>&1; echo "lab rc=$?"
grep -E "ACCEPTED|REJECTED|INCONCLUSIVE|MIXED" $R/lab-box-landing.log | tail -1
grep -hE "^\| C[0-9]+ .*(FASTER|SLOWER|WITHIN|SMALL|AMBIG)" $R/lab/*/report.md | cut -c1-110
export MLALAB_TEST_VARIANTS='^wgmma_(h64_t64_w8_s2|h64_t32_w8_s4|h16_t64_w4_s2)$'
timeout 200 build-q2/tests/mlalab_gpu_tests > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?" >> $R/gpu_tests.log
grep -E "FAILED  \]|PASSED|rc=" $R/gpu_tests.log | tail -8
export MLALAB_TEST_CASES='^(b3_h64_p64|b3_h128_long_p64|all_lengths_h16_p64)$'
for v in wgmma_h64_t64_w8_s2 wgmma_h64_t32_w8_s4; do
  export MLALAB_TEST_VARIANTS="^$v\$"
  timeout 60 compute-sanitizer --tool memcheck --error-exitcode 1 build-q2/tests/mlalab_gpu_tests --gtest_filter='Layouts/DecodeSweep.*' > $R/memcheck_$v.log 2>&1; echo "memcheck rc=$?" >> $R/memcheck_$v.log
  timeout 50 compute-sanitizer --tool synccheck --error-exitcode 1 build-q2/tests/mlalab_gpu_tests --gtest_filter='Layouts/DecodeSweep.*' > $R/synccheck_$v.log 2>&1; echo "synccheck rc=$?" >> $R/synccheck_$v.log
  tail -qn 2 $R/memcheck_$v.log $R/synccheck_$v.log | grep -v "^$"
done
cd $OUT && tar -czf r5.tgz r5
