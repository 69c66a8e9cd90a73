#!/bin/bash
# Run in session 30 (written in session 29 as its call 4): V3's rope span in the first piece (build-q2 of that source), against
# version 44 with the rope in the rest (build-v44a) and d806ff7 (build-prev): GPU tests,
# memcheck and synccheck, the labs of both 64-head variants, a bench at H = 128.
R=$OUT/r4; mkdir -p $R
mkdir -p build-q2/bin build-q2/tests build-prev/bin build-v44a/bin bins
tar -xJf build-d29/bins4.txz -C bins
cp bins/new2 build-q2/bin/mlalab; cp bins/newt2 build-q2/tests/mlalab_gpu_tests; cp bins/prev build-prev/bin/mlalab; cp bins/new build-v44a/bin/mlalab
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $R/gpu.csv
export MLALAB_TEST_VARIANTS='^wgmma_(h64_t64_w8_s2|h64_t32_w8_s4|h16_t64_w4_s2)$'
timeout 200 build-q2/tests/mlalab_gpu_tests > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?" >> $R/gpu_tests.log
grep -E "FAILED  \]|PASSED|rc=" $R/gpu_tests.log | tail -8
export MLALAB_TEST_CASES='^(b3_h64_p64|b3_h128_long_p64|all_lengths_h16_p64)$'
for v in wgmma_h64_t64_w8_s2 wgmma_h64_t32_w8_s4; do
  export MLALAB_TEST_VARIANTS="^$v\$"
  timeout 60 compute-sanitizer --tool memcheck --error-exitcode 1 build-q2/tests/mlalab_gpu_tests --gtest_filter='Layouts/DecodeSweep.*' > $R/memcheck_$v.log 2>&1; echo "memcheck rc=$?" >> $R/memcheck_$v.log
  timeout 50 compute-sanitizer --tool synccheck --error-exitcode 1 build-q2/tests/mlalab_gpu_tests --gtest_filter='Layouts/DecodeSweep.*' > $R/synccheck_$v.log 2>&1; echo "synccheck rc=$?" >> $R/synccheck_$v.log
  tail -qn 2 $R/memcheck_$v.log $R/synccheck_$v.log | grep -v "^$" | tr '\n' ' '; echo
done
# racecheck of the 64-token variant on small cases (the seesaw's hand-off is outside its model)
MLALAB_TEST_VARIANTS='^wgmma_h64_t64_w8_s2$' MLALAB_TEST_CASES='^(one_token_b1_h1_p1|b3_h64_p64|b3_h17_p16)$' timeout 150 compute-sanitizer --tool racecheck --error-exitcode 1 build-q2/tests/mlalab_gpu_tests --gtest_filter='Layouts/DecodeSweep.*' > $R/racecheck_t64.log 2>&1; echo "racecheck rc=$?" >> $R/racecheck_t64.log
tail -n 3 $R/racecheck_t64.log | tr '\n' ' '; echo
unset MLALAB_TEST_VARIANTS MLALAB_TEST_CASES
D=docs/results/2026-12-04-h200-v44/rope-first
for e in rope-first rope-first-t32; do
  timeout 230 build-q2/bin/mlalab ab $D/$e.toml --max-minutes 3 --out $R/lab > $R/lab-$e.log 2>&1; echo "lab $e rc=$?"
  grep -E "ACCEPTED|REJECTED|INCONCLUSIVE|MIXED|NO_CHANGE" $R/lab-$e.log | tail -2
done
grep -hE "^\| C[0-9]+ .*(FASTER|SLOWER|WITHIN|SMALL|AMBIG)" $R/lab/*/report.md | cut -c1-100
timeout 90 build-q2/bin/mlalab bench --heads 128 --batch 8,32,64,128 --context 4096 --variant wgmma_h64_t32_w8_s4,wgmma_h64_t64_w8_s2 --json $R/bench_h128.json > $R/bench_h128.log 2>&1
grep "^| w" $R/bench_h128.log | awk -F'|' '{print $2,$3,$7,$8,$11}'
cd $OUT && tar -czf r4.tgz r4
