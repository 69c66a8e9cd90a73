#!/bin/bash
# Session 30, device call 7: version 46 (the balanced combine merges against a running maximum)
# from build-new (h16_t16_w4_s2 and three wgmma variants, with tests) against 07bb6e7's build
# of the two 64-head wgmma variants (build-prev): GPU tests, memcheck of the combine's cases,
# the lab, and the combine under Nsight Compute.
R=$OUT/v46; mkdir -p $R
pack() { (cd $OUT && tar -czf v46.tgz v46); }
mkdir -p build-new/bin build-new/tests build-prev/bin bins
tar -xJf build-d33/bins.txz -C bins
cp bins/new build-new/bin/mlalab; cp bins/newt build-new/tests/mlalab_gpu_tests; cp bins/prev build-prev/bin/mlalab
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,driver_version --format=csv > $R/gpu.csv
export MLALAB_TEST_VARIANTS='^(h16_t16_w4_s2|wgmma_h64_t64_w8_s2|wgmma_h64_t32_w8_s4|wgmma_h16_t64_w4_s2)$'
timeout 100 build-new/tests/mlalab_gpu_tests > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?" >> $R/gpu_tests.log
grep -E "FAILED  \]|PASSED|rc=" $R/gpu_tests.log | tail -6; pack
MLALAB_TEST_VARIANTS='^wgmma_h64_t64_w8_s2$' MLALAB_TEST_CASES='^(b3_h64_p64|b3_h128_long_p64|all_lengths_h16_p64)$' \
  timeout 40 compute-sanitizer --tool memcheck --error-exitcode 1 build-new/tests/mlalab_gpu_tests \
  --gtest_filter='Layouts/DecodeSweep.*' > $R/memcheck_t64.log 2>&1; echo "memcheck rc=$?" >> $R/memcheck_t64.log
tail -n 2 $R/memcheck_t64.log | tr '\n' ' '; echo; pack
timeout 110 build-new/bin/mlalab ab docs/results/2026-12-04-h200-v46/combine-one-trip.toml --max-minutes 1.6 --out $R/lab > $R/lab.log 2>&1; echo "lab rc=$?"
grep -E "ACCEPTED|REJECTED|INCONCLUSIVE|MIXED|NO_CHANGE" $R/lab.log | tail -1
grep -hE "^\| C[0-9]+ .*(FASTER|SLOWER|WITHIN|SMALL|AMBIG)" $R/lab/*/report.md | cut -c1-100; pack
for b in new prev; do
  timeout 30 ncu --clock-control none --cache-control none --kernel-name regex:combine --launch-skip 2 --launch-count 2 \
    --metrics gpu__time_duration.sum,dram__bytes_read.sum build-$b/bin/mlalab bench --heads 128 --batch 64 \
    --context 8192 --lengths uniform:0.125 --split balanced --variant wgmma_h64_t64_w8_s2 > $R/ncu_combine_$b.txt 2>&1
  echo "ncu $b"; grep -E "gpu__time_duration" $R/ncu_combine_$b.txt
done
pack
