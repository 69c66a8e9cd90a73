#!/bin/bash
# Session 30, device call 2: version 44's full build (every variant, MLALAB_CUDA_ARCHS=90a):
# both tuning tables re-tuned --fresh, issue 12's targets, the decode sweep of all eight wgmma
# variants, racecheck of the 64-token variant, Nsight Compute of it at 128 heads, batch 64.
# Each step re-packs r5.tgz, so a call cut short still returns what it measured.
R=$OUT/r5; mkdir -p $R
pack() { (cd $OUT && tar -czf r5.tgz r5); }
mkdir -p build-full/bin build-full/tests bins
tar -xJf build-d30/bins5.txz -C bins
cp bins/mlalab build-full/bin/mlalab; cp bins/gpu_tests build-full/tests/mlalab_gpu_tests
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,clocks.max.sm,driver_version --format=csv > $R/gpu.csv
bash scripts/gpu_session.sh build-full $R/retuned tune > $R/retune.log 2>&1; echo "retune rc=$?"
grep -E "^=== |keys|in [0-9]" $R/retune.log | head -8; pack
timeout 170 python3 bench/targets/hopper_targets.py --mlalab build-full/bin/mlalab --out $R/targets \
  --variants h16_t16_w4_s2,wgmma_h64_t32_w8_s4,wgmma_h64_t64_w8_s2,wgmma_h16_t64_w4_s2 \
  --peers docs/results/2026-12-04-h200-v38/peers/peers.json > $R/targets.log 2>&1; echo "targets rc=$?"
grep -E "met|missed" $R/targets.log | cut -c1-150; pack
MLALAB_TEST_VARIANTS='^wgmma_.*$' timeout 120 build-full/tests/mlalab_gpu_tests \
  --gtest_filter='Layouts/DecodeSweep.*' > $R/sweep_wgmma.log 2>&1; echo "sweep rc=$?" >> $R/sweep_wgmma.log
grep -E "PASSED|FAILED|rc=" $R/sweep_wgmma.log | tail -4; pack
MLALAB_TEST_VARIANTS='^wgmma_h64_t64_w8_s2$' MLALAB_TEST_CASES='^(one_token_b1_h1_p1|b3_h64_p64|b3_h17_p16)$' \
  timeout 60 compute-sanitizer --tool racecheck --error-exitcode 1 build-full/tests/mlalab_gpu_tests \
  --gtest_filter='Layouts/DecodeSweep.*' > $R/racecheck_t64.log 2>&1; echo "racecheck rc=$?" >> $R/racecheck_t64.log
tail -n 2 $R/racecheck_t64.log | tr '\n' ' '; echo; pack
timeout 90 ncu --kernel-name regex:decode_kernel --launch-skip 3 --launch-count 1 \
  --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
  --section MemoryWorkloadAnalysis --section SchedulerStats --section Occupancy \
  build-full/bin/mlalab bench --heads 128 --batch 64 --context 4096 --variant wgmma_h64_t64_w8_s2 > $R/ncu_t64_b64.txt 2>&1
echo "ncu rc=$?"; pack
