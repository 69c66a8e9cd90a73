#!/bin/bash
# Session 27 device call 3: the seesaw at block_t 64 (hack build: uses_seesaw for t64, S at
# N = 64), its GPU tests, and compute ceilings with MLALAB_HACK_NO_COPY (tiles past a part's
# first kStages not copied) against the t32 seesaw.
R=$OUT/r3; mkdir -p $R
mkdir -p bins && tar -xJf build-d27/bins3.txz -C bins
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $R/gpu.csv
export MLALAB_TEST_VARIANTS='^wgmma_h64_t64_w8_s2$'
timeout 120 bins/hackt > $R/gpu_tests.log 2>&1; echo "gpu_tests rc=$?" >> $R/gpu_tests.log
grep -E "FAILED|PASSED|rc=" $R/gpu_tests.log | tail -8
unset MLALAB_TEST_VARIANTS
V=wgmma_h64_t32_w8_s4,wgmma_h64_t64_w8_s2
for mode in copy nocopy; do
  if [ $mode = nocopy ]; then export MLALAB_HACK_NO_COPY=1; else unset MLALAB_HACK_NO_COPY; fi
  timeout 100 bins/hack bench --heads 128 --batch 8,32,64,128 --context 4096 --variant $V --json $R/h128_$mode.json > $R/h128_$mode.log 2>&1
  echo "== $mode"; grep "^| w" $R/h128_$mode.log | awk -F'|' '{print $2,$3,$7,$8,$11}'
done
unset MLALAB_HACK_NO_COPY
cd $OUT && tar -czf r3.tgz r3 && rm -rf r3
