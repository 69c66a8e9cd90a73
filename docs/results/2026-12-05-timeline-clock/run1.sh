#!/bin/bash
# Where the fixed ~8-11 µs of a split launch go, and at what SM clock the ring's cycles were
# counted (session 38). A timeline build whose parts now record the SM clock at their end
# (TimelinePart::end_clock) and whose swapped kernel records its MMA warps' tile events; its
# bench --timeline at the split launches the targets are short at (128 heads: 8, 2 and 1 splits;
# 16 heads, swapped kernel: batch 1, 8, 32, 128), and nvidia-smi's clocks and power sampled
# while a normal build runs the 128-head and 16-head batches long.
# Before it, here:
#   MLALAB_TIMELINE=ON MLALAB_VARIANTS='^(wgmma_h64_t64_w8_s2|wgmma_h16_t64_w4_s2)$' \
#     MLALAB_CUDA_ARCHS=90a bash scripts/build.sh build-tl
#   bash scripts/pack_build.sh build-tl build-d/tl.txz
# and call with carry ["build-d/land.txz", "build-d/tl.txz"] (land: main's normal full build).
# Writes $OUT/clock.tar.gz.
for b in land tl; do
  mkdir -p build-$b && tar -xJf build-d/$b.txz -C build-$b || exit 1
done
out=/tmp/mlalab-session/clock
mkdir -p "$out"
{ date -u; git rev-parse --short=12 HEAD; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,power.limit,driver_version --format=csv; } > "$out/info.log" 2>&1
cat "$out/info.log"
timeout 120 build-tl/tests/mlalab_gpu_tests --gtest_filter='RunCudaBench.ATimeline*' \
  > "$out/timeline_gpu_test.log" 2>&1
tail -n 3 "$out/timeline_gpu_test.log"
for case in "h128_b8 128 8 wgmma_h64_t64_w8_s2" "h128_b32 128 32 wgmma_h64_t64_w8_s2" \
            "h128_b64 128 64 wgmma_h64_t64_w8_s2" "h16_b1 16 1 wgmma_h16_t64_w4_s2" \
            "h16_b8 16 8 wgmma_h16_t64_w4_s2" "h16_b32 16 32 wgmma_h16_t64_w4_s2" \
            "h16_b128 16 128 wgmma_h16_t64_w4_s2"; do
  read -r name heads batch variant <<< "$case"
  timeout 120 build-tl/bin/mlalab bench --heads "$heads" --batch "$batch" --context 4096 \
    --variant "$variant" --timeline "$out/timeline_$name.json" > "$out/timeline_$name.log" 2>&1
  grep -E "^\| wgmma|^timeline" "$out/timeline_$name.log"
done
# Sustained load: the SM clock, power and throttle reasons every 50 ms.
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv -lms 50 > "$out/smi.csv" 2>&1 &
smi=$!
for case in "h128_b64 128 64 wgmma_h64_t64_w8_s2 20000" "h16_b128 16 128 wgmma_h64_t64_w8_s2 10000"; do
  read -r name heads batch variant runs <<< "$case"
  echo "$(date -u +%H:%M:%S.%N) start $name" >> "$out/sustained.log"
  timeout 200 build-land/bin/mlalab bench --heads "$heads" --batch "$batch" --context 4096 \
    --variant "$variant" --runs "$runs" >> "$out/sustained.log" 2>&1
  echo "$(date -u +%H:%M:%S.%N) end $name" >> "$out/sustained.log"
done
kill $smi
grep -E "^\| wgmma|start|end" "$out/sustained.log"
xz -T0 "$out"/*.json
tar -czf "$OUT/clock.tar.gz" -C /tmp/mlalab-session clock
