#!/bin/bash
# Landing version 55 (ACCEPTED on an H100, +2.4 % at C1; perf-notes "Version 55"), two calls on
# an H200, whose tables docs/results/2026-12-01-h200-tuning/ are:
#   bash docs/results/2026-12-05-timeline-clock/land.sh checks   (~6 min: GPU tests, sanitizers)
#   bash docs/results/2026-12-05-timeline-clock/land.sh tune     (~8 min: both equal-length tables
#                                                                 --fresh, then issue 12's targets)
# with carry ["build-d/land55.txz"]: the full build (68 variants, sm_90a, tests) of main with
# swapped-pieces-main.patch applied, made here in session 38 (a worktree of dcb41c2):
#   MLALAB_VARIANTS='.*' MLALAB_CUDA_ARCHS=90a bash scripts/build.sh build-land55
#   bash scripts/pack_build.sh build-land55 build-d/land55.txz
# Then apply the patch to main, install the re-tuned tables (`cp` from the archive's tune/ after
# reading its logs: every hash the build's), commit the targets under a new results folder.
# Writes $OUT/land55-STAGE.tar.gz.
exec bash scripts/land_kernel_change.sh land55 "${1:?checks or tune}"
