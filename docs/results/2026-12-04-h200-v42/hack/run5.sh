#!/bin/bash
# Session 27 device call 5: the pair order with a span-grained ring (hack build: still has
# MLALAB_HACK_NO_COPY); GPU tests, sanitizers, bench with and without copies.
R=$OUT/r5; mkdir -p $R
mkdir -p bins && tar -xJf build-d27/bins5.txz -C bins
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $R/gpu.csv
export MLALAB_TEST_VARIANTS='^wgmma_h64_.*$'
timeout 150 bins/hackt > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?" >> $R/gpu_tests.log
grep -E "FAILED|PASSED|rc=" $R/gpu_tests.log | tail -12
export MLALAB_TEST_VARIANTS='^wgmma_h64_t64_w8_s2$'
export MLALAB_TEST_CASES='^(b3_h64_p64|b3_h128_long_p64|all_lengths_h16_p64)$'
timeout 80 compute-sanitizer --tool memcheck --error-exitcode 1 bins/hackt --gtest_filter='Layouts/DecodeSweep.*' > $R/memcheck.log 2>&1; echo "memcheck rc=$?" >> $R/memcheck.log
timeout 60 compute-sanitizer --tool synccheck --error-exitcode 1 bins/hackt --gtest_filter='Layouts/DecodeSweep.*' > $R/synccheck.log 2>&1; echo "synccheck rc=$?" >> $R/synccheck.log
unset MLALAB_TEST_VARIANTS MLALAB_TEST_CASES
tail -n 2 $R/memcheck.log $R/synccheck.log
V=wgmma_h64_t32_w8_s4,wgmma_h64_t64_w8_s2
for mode in copy nocopy; do
  if [ $mode = nocopy ]; then export MLALAB_HACK_NO_COPY=1; else unset MLALAB_HACK_NO_COPY; fi
  timeout 100 bins/hack bench --heads 128 --batch 8,32,64,128 --context 4096 --variant $V --json $R/h128_$mode.json > $R/h128_$mode.log 2>&1
  echo "== $mode"; grep "^| w" $R/h128_$mode.log | awk -F'|' '{print $2,$3,$7,$8,$11}'
done
unset MLALAB_HACK_NO_COPY
timeout 100 bins/hack bench --layout v4 --heads 128 --batch 32,64,128 --context 4096 --variant $V --json $R/h128_v4.json > $R/h128_v4.log 2>&1
echo "== v4"; grep "^| w" $R/h128_v4.log | awk -F'|' '{print $2,$3,$7,$8,$11}'
cd $OUT && tar -czf r5.tgz r5 && rm -rf r5
