#!/bin/bash
# Version 51's device call (session 34), after land1.sh of ../2026-12-05-h200-v50 (whose full
# build of version 50, build-land, is the labs' old arm). Built here, in a worktree of main with
# ../2026-12-05-h200-v50/take-after-issue.patch and then rest-first.patch applied:
#   MLALAB_VARIANTS='^(h16_t16_w4_s2|wgmma_h64_t64_w8_s2|wgmma_h64_t32_w8_s4|wgmma_h16_t64_w4_s2)$' \
#     MLALAB_CUDA_ARCHS=90a bash scripts/build.sh build-v51
#   MLALAB_TIMELINE=ON MLALAB_BUILD_TESTS=OFF MLALAB_VARIANTS='^wgmma_h64_t64_w8_s2$' \
#     MLALAB_CUDA_ARCHS=90a bash scripts/build.sh build-tl51
#   for b in v51 tl51; do bash scripts/pack_build.sh build-$b build-d/$b.txz; done
# Carry ["build-d/land.txz", "build-d/v51.txz", "build-d/tl51.txz"]. The 64-token variant's
# GPU sweep and memcheck (the change moves barrier waits), its ring timeline, then both labs.
# Writes $OUT/v51.tar.gz; no step starts after MLALAB_STOP_AT.
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 280 ))}"
# build-v51 from v51.txz, or from v51full.txz (run2.sh: the full build, same kernels).
for b in land v51 v51full tl51; do
  dir=build-${b%full}
  [ -x $dir/bin/mlalab ] && continue
  [ -f build-d/$b.txz ] || continue
  mkdir -p $dir && tar -xJf build-d/$b.txz -C $dir || exit 1
done
R=docs/results/2026-12-05-h200-v51
out=/tmp/mlalab-session/v51
mkdir -p "$out"
archive="$OUT/v51.tar.gz"
source scripts/session_steps.sh  # step NAME CMD...: bounded by MLALAB_STOP_AT, packed
step info bash -c "date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv"
step gpu_sweep env MLALAB_TEST_VARIANTS='^wgmma_h64_t64' build-v51/tests/mlalab_gpu_tests \
  --gtest_filter='Layouts/DecodeSweep.*:DecodeValidation.*'
for lab in rest-first-h128 rest-first-page1 rest-first-h16; do
  step "ab_$lab" build-v51/bin/mlalab ab $R/$lab.toml --out "$out/ab"
done
[ -x build-tl51/bin/mlalab ] && step timeline_h128_b64_t64 build-tl51/bin/mlalab bench --heads 128 \
  --batch 64 --context 4096 --variant wgmma_h64_t64_w8_s2 --timeline "$out/timeline_h128_b64_t64.json"
step memcheck env MLALAB_TEST_VARIANTS='^wgmma_h64_t64' \
  MLALAB_TEST_CASES='^(b3_h64_p64|b3_h17_p16|one_long_among_short_b9_h128_p64|mixed_b97_h17_p1)$' \
  compute-sanitizer --tool memcheck --error-exitcode 1 build-v51/tests/mlalab_gpu_tests \
  --gtest_filter='Layouts/DecodeSweep.*'
step synccheck env MLALAB_TEST_VARIANTS='^wgmma_h64_t64' MLALAB_TEST_CASES='^(b3_h64_p64|mixed_b97_h17_p1)$' \
  compute-sanitizer --tool synccheck --error-exitcode 1 build-v51/tests/mlalab_gpu_tests \
  --gtest_filter='Layouts/DecodeSweep.*'
xz -T0 "$out"/*.json 2>/dev/null
pack
