#!/bin/bash
# Where the 64-head kernels wait at page size 1 against page 64 (128 heads, batch 64, 4,096
# tokens, V3): Nsight Compute's warp-state sampling per source line, as gpu_session.sh's
# stalls stage, for wgmma_h64_t32_w8_s4 at page 1 and at page 64 and wgmma_h64_t64_w8_s2 at
# page 1. Carry ["build-d/land60.txz"] (main's build). Writes $OUT/page1-stalls.tar.gz.
export MLALAB_STOP_AT=$(( $(date +%s) + ${MLALAB_CALL_SECONDS:-420} ))
source scripts/session_steps.sh
session_folder page1-stalls
unpack_builds land60 || exit 1
info_step
mlalab=build-land60/bin/mlalab
source_folders=()
ncu --help 2>/dev/null | grep -- '--source-folders' > /dev/null &&
  source_folders=(--source-folders "$PWD")
for case in "t32_page1 wgmma_h64_t32_w8_s4 1" "t32_page64 wgmma_h64_t32_w8_s4 64" \
            "t64_page1 wgmma_h64_t64_w8_s2 1"; do
  read -r name variant page <<< "$case"
  report="$out.ncu/stalls_$name"
  mkdir -p "$out.ncu"
  run "stalls_$name" ncu --clock-control none --kernel-name regex:decode_kernel \
    --launch-skip 3 --launch-count 1 --section WarpStateStats --section SourceCounters \
    --section SpeedOfLight --section MemoryWorkloadAnalysis --import-source yes \
    "${source_folders[@]}" -f -o "$report" \
    "$mlalab" bench --heads 128 --batch 64 --context 4096 --page-size "$page" \
    --variant "$variant"
  run "stalls_${name}_details" ncu -i "$report.ncu-rep" --page details
  run "stalls_${name}_source" ncu -i "$report.ncu-rep" --page source --csv \
    --print-source cuda,sass
  run "stalls_${name}_lines" python3 scripts/ncu_stall_lines.py "$out/stalls_${name}_source.log"
  pack
done
exit $status
