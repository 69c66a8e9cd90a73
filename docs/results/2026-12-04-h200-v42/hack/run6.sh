#!/bin/bash
# Session 27 device call 6: span-grained pair order, cp.async path fixed (commit before wait);
# A: S waits span by span, one commit group each; B: S waits for every span, then one group.
R=$OUT/r6; mkdir -p $R
mkdir -p bins && tar -xJf build-d27/bins6.txz -C bins
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $R/gpu.csv
export MLALAB_TEST_VARIANTS='^wgmma_h64_t64_w8_s2$'
for x in A B; do
  timeout 100 bins/hackt$x > $R/gpu_tests_$x.log 2>&1; echo "gpu_tests rc=$?" >> $R/gpu_tests_$x.log
  echo "== tests $x"; grep -E "FAILED  \]|PASSED|rc=" $R/gpu_tests_$x.log | tail -5
done
unset MLALAB_TEST_VARIANTS
for x in A B; do
for mode in copy nocopy; do
  if [ $mode = nocopy ]; then export MLALAB_HACK_NO_COPY=1; else unset MLALAB_HACK_NO_COPY; fi
  V=wgmma_h64_t64_w8_s2; [ $x$mode = Acopy ] && V=wgmma_h64_t32_w8_s4,wgmma_h64_t64_w8_s2
  timeout 60 bins/hack$x bench --heads 128 --batch 32,64,128 --context 4096 --variant $V --json $R/h128_${x}_$mode.json > $R/h128_${x}_$mode.log 2>&1
  echo "== $x $mode"; grep "^| w" $R/h128_${x}_$mode.log | awk -F'|' '{print $2,$3,$7,$8,$11}'
done
done
cd $OUT && tar -czf r6.tgz r6 && rm -rf r6
