#!/bin/bash
# Session 27 device call 2: compute ceilings (MLALAB_HACK_NO_COPY: tiles past a part's first
# kStages not copied; validation runs with copies) of the t32 seesaw and the t64 seesaw hack.
R=$OUT/r2; mkdir -p $R
mkdir -p bins && tar -xJf build-d27/bins2.txz -C bins
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm --format=csv > $R/gpu.csv
V=wgmma_h64_t32_w8_s4,wgmma_h64_t32_w8_s2,wgmma_h64_t64_w8_s2
for mode in nocopy copy; do
  if [ $mode = nocopy ]; then export MLALAB_HACK_NO_COPY=1; else unset MLALAB_HACK_NO_COPY; fi
  timeout 100 bins/hack bench --heads 128 --batch 8,32,64,128 --context 4096 --variant $V --json $R/h128_$mode.json > $R/h128_$mode.log 2>&1
  echo "== $mode"; grep "^| w" $R/h128_$mode.log | awk -F'|' '{print $2,$3,$7,$8,$11}'
done
cd $OUT && tar -czf r2.tgz r2 && rm -rf r2
