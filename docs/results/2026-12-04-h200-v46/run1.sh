#!/bin/bash
# Version 46's device call (written in session 30; never run as such: version 46 was measured
# as a variant of version 47's lab, in session 33).
# Before it, here: apply combine-one-trip.patch, build h16_t16_w4_s2 and the three wgmma
# variants with tests into build-new, build 07bb6e7's two 64-head wgmma variants into
# build-prev (`bash scripts/build_previous.sh 07bb6e7` with MLALAB_VARIANTS set to them), then
#   bash scripts/pack_build.sh build-new build-d/new.txz
#   bash scripts/pack_build.sh build-prev build-d/prev.txz
# and call with carry ["build-d"]. GPU tests, memcheck and synccheck of the 64-token variant,
# the lab, and the combine's time under Nsight Compute for both builds.
mkdir -p build-new build-prev
tar -xJf build-d/new.txz -C build-new && tar -xJf build-d/prev.txz -C build-prev || exit 1
export MLALAB_TEST_VARIANTS='^(h16_t16_w4_s2|wgmma_h64_t64_w8_s2|wgmma_h64_t32_w8_s4|wgmma_h16_t64_w4_s2)$'
export MLALAB_SANITIZE_VARIANTS='^wgmma_h64_t64_w8_s2$'
export MLALAB_SANITIZE_CASES='^(b3_h64_p64|b3_h128_long_p64|all_lengths_h16_p64)$'
export MLALAB_SYNCCHECK_VARIANTS='^wgmma_h64_t64_w8_s2$' MLALAB_RACECHECK_VARIANTS='^h16_t16_w4_s2$'
export MLALAB_AB_EXPERIMENTS=docs/results/2026-12-04-h200-v46/combine-one-trip.toml
bash scripts/gpu_session.sh build-new "$OUT/v46" info tests sanitize ab
for b in new prev; do
  timeout 30 ncu --clock-control none --cache-control none --kernel-name regex:combine \
    --launch-skip 2 --launch-count 2 --metrics gpu__time_duration.sum,dram__bytes_read.sum \
    build-$b/bin/mlalab bench --heads 128 --batch 64 --context 8192 --lengths uniform:0.125 \
    --split balanced --variant wgmma_h64_t64_w8_s2 > "$OUT/ncu_combine_$b.txt" 2>&1
  grep -E "gpu__time_duration" "$OUT/ncu_combine_$b.txt"
done
