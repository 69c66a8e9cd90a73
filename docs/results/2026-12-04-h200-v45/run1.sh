#!/bin/bash
# Session 30, device call 5: version 45 (a balanced worker prefetches its first part's partial
# rows into the L2) from build-new (h16_t16_w4_s2 and three wgmma variants, with tests) against
# 07bb6e7's build of the three wgmma variants (build-prev): GPU tests, memcheck and synccheck,
# the three labs, and the combine's DRAM bytes under Nsight Compute for both builds.
R=$OUT/v45; mkdir -p $R
pack() { (cd $OUT && tar -czf v45.tgz v45); }
mkdir -p build-new/bin build-new/tests build-prev/bin bins
tar -xJf build-d31/bins.txz -C bins
cp bins/new build-new/bin/mlalab; cp bins/newt build-new/tests/mlalab_gpu_tests; cp bins/prev build-prev/bin/mlalab
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,driver_version --format=csv > $R/gpu.csv
export MLALAB_TEST_VARIANTS='^wgmma_(h64_t64_w8_s2|h64_t32_w8_s4|h16_t64_w4_s2)$'
timeout 200 build-new/tests/mlalab_gpu_tests > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?" >> $R/gpu_tests.log
grep -E "FAILED  \]|PASSED|rc=" $R/gpu_tests.log | tail -6
export MLALAB_TEST_CASES='^(b3_h64_p64|b3_h128_long_p64|all_lengths_h16_p64)$'
for v in wgmma_h64_t64_w8_s2 wgmma_h64_t32_w8_s4 wgmma_h16_t64_w4_s2; do
  export MLALAB_TEST_VARIANTS="^$v\$"
  timeout 60 compute-sanitizer --tool memcheck --error-exitcode 1 build-new/tests/mlalab_gpu_tests --gtest_filter='Layouts/DecodeSweep.*' > $R/memcheck_$v.log 2>&1; echo "memcheck rc=$?" >> $R/memcheck_$v.log
  timeout 50 compute-sanitizer --tool synccheck --error-exitcode 1 build-new/tests/mlalab_gpu_tests --gtest_filter='Layouts/DecodeSweep.*' > $R/synccheck_$v.log 2>&1; echo "synccheck rc=$?" >> $R/synccheck_$v.log
  tail -qn 2 $R/memcheck_$v.log $R/synccheck_$v.log | grep -v "^$" | tr '\n' ' '; echo
done
unset MLALAB_TEST_VARIANTS MLALAB_TEST_CASES
pack
for e in partials-prefetch regression-balanced-h128 partials-prefetch-h16; do
  timeout 150 build-new/bin/mlalab ab experiments/$e.toml --max-minutes 2 --out $R/lab > $R/lab-$e.log 2>&1; echo "lab $e rc=$?"
  grep -E "ACCEPTED|REJECTED|INCONCLUSIVE|MIXED|NO_CHANGE" $R/lab-$e.log | tail -1
  pack
done
grep -hE "^\| C[0-9]+ .*(FASTER|SLOWER|WITHIN|SMALL|AMBIG)" $R/lab/*/report.md | cut -c1-100
for b in new prev; do
  timeout 60 ncu --clock-control none --cache-control none --kernel-name regex:'decode_kernel|combine' \
    --launch-skip 4 --launch-count 4 --metrics gpu__time_duration.sum,dram__bytes_read.sum \
    build-$b/bin/mlalab bench --heads 128 --batch 64 --context 8192 --lengths uniform:0.125 --split balanced \
    --variant wgmma_h64_t64_w8_s2 > $R/ncu_combine_$b.txt 2>&1
  echo "ncu $b"; grep -E "^  [a-z_]+.*\(|gpu__time_duration|dram__bytes_read|passes" $R/ncu_combine_$b.txt | cut -c1-90 | head -12
done
pack
