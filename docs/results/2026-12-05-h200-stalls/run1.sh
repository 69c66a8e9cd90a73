#!/bin/bash
# Where the 64-token wgmma kernel's warps wait, per source line (written in session 32, which
# had no device; run in session 33). build-prev is 07bb6e7's build of wgmma_h64_t32_w8_s4 and
# wgmma_h64_t64_w8_s2, whose src/ is HEAD's (`git diff 07bb6e7 HEAD -- src` is empty at 97d4458),
# so the line numbers in the samples are HEAD's. Call with carry ["build-d"] (build-d/prev.txz:
# the header of ../2026-12-04-h200-v47/run1.sh says how to build and pack it), alone or after
# the v47/v48 calls (MLALAB_STOP_AT shared).
: "${MLALAB_STOP_AT:=$(( $(date +%s) + 570 ))}"
export MLALAB_STOP_AT
[ -x build-prev/bin/mlalab ] || { mkdir -p build-prev && tar -xJf build-d/prev.txz -C build-prev; } || exit 1
MLALAB_ARCHIVE_DIR="$OUT" bash scripts/gpu_session.sh build-prev /tmp/mlalab-session/stalls info stalls
