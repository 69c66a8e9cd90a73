#!/bin/bash
# One H200 call for two questions (needs_h200; carry ["build-d/land59.txz",
# "build-d/tile_pattern"]): this folder's tile_pattern (~10 s, into $OUT/tile-pattern-h200/),
# then version 59's call1.sh (the lab A/B whole against pieces, then both tables re-tuned;
# ../2026-12-06-v59/README.md), which bounds itself to ~575 s.
mkdir -p "$OUT/tile-pattern-h200"
{ date -u; nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks.mem,driver_version \
    --format=csv; timeout 40 build-d/tile_pattern; } > "$OUT/tile-pattern-h200/pattern.log" 2>&1
cat "$OUT/tile-pattern-h200/pattern.log"
bash docs/results/2026-12-06-v59/call1.sh
