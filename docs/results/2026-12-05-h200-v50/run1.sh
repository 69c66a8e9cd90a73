#!/bin/bash
# Version 50's device call (session 33). Before it, here, with version 50 in the working tree
# (or take-after-issue.patch applied):
#   MLALAB_VARIANTS='^(h16_t16_w4_s2|wgmma_h64_t64_w8_s2|wgmma_h64_t32_w8_s4|wgmma_h16_t64_w4_s2)$' \
#     MLALAB_CUDA_ARCHS=90a bash scripts/build.sh build-v50
#   MLALAB_TIMELINE=ON MLALAB_BUILD_TESTS=OFF \
#     MLALAB_VARIANTS='^(wgmma_h64_t64_w8_s2|wgmma_h64_t32_w8_s4|wgmma_h16_t64_w4_s2)$' \
#     MLALAB_CUDA_ARCHS=90a bash scripts/build.sh build-tl50
#   for b in v50 tl50; do bash scripts/pack_build.sh build-$b build-d/$b.txz; done
# and call with carry ["build-d/prev.txz", "build-d/v50.txz", "build-d/tl50.txz"]: the wgmma
# variants' GPU sweep, the ring timeline of version 50 at 128 and 16 heads, batch 64, then both
# labs. Writes $OUT/v50.tar.gz; no step starts after MLALAB_STOP_AT.
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 280 ))}"
for b in prev v50 tl50; do
  mkdir -p build-$b && tar -xJf build-d/$b.txz -C build-$b || exit 1
done
out=/tmp/mlalab-session/v50
mkdir -p "$out"
step() {  # step NAME CMD...: run it unless the stop time has passed, its output to NAME.log
  local name=$1; shift
  [ "$(date +%s)" -ge "$MLALAB_STOP_AT" ] && { echo "$name skipped" >> "$out/skipped.txt"; return; }
  timeout --foreground $(( MLALAB_STOP_AT - $(date +%s) )) "$@" > "$out/$name.log" 2>&1
  echo "=== $name: exit $?"; tail -n 4 "$out/$name.log"
  tar -czf "$OUT/v50.tar.gz" -C /tmp/mlalab-session v50
}
step info bash -c "date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv"
step gpu_sweep env MLALAB_TEST_VARIANTS='^wgmma_' build-v50/tests/mlalab_gpu_tests \
  --gtest_filter='Layouts/DecodeSweep.*:DecodeValidation.*'
for case in "h128_b64_t64 128 wgmma_h64_t64_w8_s2" "h16_b64_t32 16 wgmma_h64_t32_w8_s4"; do
  read -r name heads variant <<< "$case"
  step "timeline_$name" build-tl50/bin/mlalab bench --heads "$heads" --batch 64 --context 4096 \
    --variant "$variant" --timeline "$out/timeline_$name.json"
done
for lab in take-after-issue-h128 take-after-issue-h16; do
  step "ab_$lab" build-v50/bin/mlalab ab docs/results/2026-12-05-h200-v50/$lab.toml --out "$out/ab"
done
xz -T0 "$out"/*.json
tar -czf "$OUT/v50.tar.gz" -C /tmp/mlalab-session v50
