#!/bin/bash
# Each KV tile's way through the wgmma kernels' ring (session 33): a timeline build's
# `mlalab bench --timeline` at the shapes of the stalls call, and the same rows from a normal
# build, to see what the recording costs; first the timeline build's GPU test of its records.
# Before it, here:
#   MLALAB_TIMELINE=ON \
#     MLALAB_VARIANTS='^(wgmma_h64_t64_w8_s2|wgmma_h64_t32_w8_s4|wgmma_h16_t64_w4_s2)$' \
#     MLALAB_CUDA_ARCHS=90a bash scripts/build.sh build-tl
#   bash scripts/pack_build.sh build-tl build-d/tl.txz
# (build-d/prev.txz: 07bb6e7's normal build, ../2026-12-04-h200-v47/run1.sh says how) and call
# with carry ["build-d/prev.txz", "build-d/tl.txz"]. Writes $OUT/ring.tar.gz.
for b in prev tl; do
  mkdir -p build-$b && tar -xJf build-d/$b.txz -C build-$b || exit 1
done
out=/tmp/mlalab-session/ring
mkdir -p "$out"
{ date -u; git rev-parse --short=12 HEAD; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version --format=csv; } > "$out/info.log" 2>&1
# The timeline build's own check of its records (every step once, the ring's events in order).
timeout 120 build-tl/tests/mlalab_gpu_tests --gtest_filter='RunCudaBench.ATimeline*' \
  > "$out/timeline_gpu_test.log" 2>&1
tail -n 3 "$out/timeline_gpu_test.log"
for case in "h128_b64_t64 128 64 wgmma_h64_t64_w8_s2" "h128_b64_t32 128 64 wgmma_h64_t32_w8_s4" \
            "h128_b8_t64 128 8 wgmma_h64_t64_w8_s2" "h16_b64_t32 16 64 wgmma_h64_t32_w8_s4" \
            "h16_b8_swapped 16 8 wgmma_h16_t64_w4_s2"; do
  read -r name heads batch variant <<< "$case"
  args=(bench --heads "$heads" --batch "$batch" --context 4096 --variant "$variant")
  timeout 120 build-tl/bin/mlalab "${args[@]}" --timeline "$out/timeline_$name.json" \
    > "$out/timeline_$name.log" 2>&1
  timeout 120 build-prev/bin/mlalab "${args[@]}" > "$out/normal_$name.log" 2>&1
  grep -E "^\| wgmma|ring,|^timeline" "$out/timeline_$name.log" "$out/normal_$name.log"
done
xz -T0 "$out"/*.json
tar -czf "$OUT/ring.tar.gz" -C /tmp/mlalab-session ring
