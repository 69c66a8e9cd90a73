#!/bin/bash
# Session 29 device call 1: version 44 (a stage freed in two pieces) from build-q2
# (h16_t16_w4_s2, wgmma_h64_t32_w8_s4, wgmma_h64_t64_w8_s2, wgmma_h16_t64_w4_s2): GPU tests,
# memcheck and synccheck, the lab of the 64-token variant against d806ff7 (version 43).
R=$OUT/r1; mkdir -p $R
mkdir -p build-q2/bin build-q2/tests build-prev/bin bins
tar -xJf build-d29/bins1.txz -C bins
cp bins/new build-q2/bin/mlalab; cp bins/newt build-q2/tests/mlalab_gpu_tests; cp bins/prev build-prev/bin/mlalab
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $R/gpu.csv
export MLALAB_TEST_VARIANTS='^wgmma_(h64_t64_w8_s2|h64_t32_w8_s4|h16_t64_w4_s2)$'
timeout 200 build-q2/tests/mlalab_gpu_tests > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?" >> $R/gpu_tests.log
grep -E "FAILED  \]|PASSED|rc=" $R/gpu_tests.log | tail -8
export MLALAB_TEST_CASES='^(b3_h64_p64|b3_h128_long_p64|all_lengths_h16_p64)$'
for v in wgmma_h64_t64_w8_s2 wgmma_h64_t32_w8_s4 wgmma_h16_t64_w4_s2; do
  export MLALAB_TEST_VARIANTS="^$v\$"
  timeout 60 compute-sanitizer --tool memcheck --error-exitcode 1 build-q2/tests/mlalab_gpu_tests --gtest_filter='Layouts/DecodeSweep.*' > $R/memcheck_$v.log 2>&1; echo "memcheck rc=$?" >> $R/memcheck_$v.log
  timeout 50 compute-sanitizer --tool synccheck --error-exitcode 1 build-q2/tests/mlalab_gpu_tests --gtest_filter='Layouts/DecodeSweep.*' > $R/synccheck_$v.log 2>&1; echo "synccheck rc=$?" >> $R/synccheck_$v.log
  tail -qn 2 $R/memcheck_$v.log $R/synccheck_$v.log | grep -v "^$"
done
unset MLALAB_TEST_VARIANTS MLALAB_TEST_CASES
timeout 170 build-q2/bin/mlalab ab experiments/piece-frees.toml --max-minutes 2.5 --out $R/lab > $R/lab-piece-frees.log 2>&1; echo "lab rc=$?"
tail -6 $R/lab-piece-frees.log
grep -E "^\| C[0-9]+ " $R/lab/*/report.md | tail -4 | cut -c1-120
cd $OUT && tar -czf r1.tgz r1
