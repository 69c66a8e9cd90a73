#!/usr/bin/env bash
# Sets up, builds, and runs the main job: an A/B experiment of the lab, written to results/.
#   with a GPU:    mlalab ab experiments/occupancy.toml  (the study: 8 warps, 3 stages)
#   without one:   mlalab ab experiments/cpu-demo.toml   (the same pipeline on the CPU backend)
#   bash scripts/run_main.sh [EXPERIMENT.toml [ab options...]]
# MLALAB_VARIANTS and MLALAB_CUDA_ARCHS select what is built (see scripts/build.sh).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

build_dir="$repo_root/build"
experiment="$repo_root/experiments/occupancy.toml"
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "run_main: no GPU found: the A/B demo runs on the CPU backend (experiments/cpu-demo.toml)"
  experiment="$repo_root/experiments/cpu-demo.toml"
  # The CPU backend needs no kernel variant: build the small test selection, unless told.
  if [[ -z "${MLALAB_VARIANTS:-}" ]]; then
    export MLALAB_VARIANTS='h16_t16_w4_s2|h64_t32_w8_s2'
    export MLALAB_CUDA_ARCHS="${MLALAB_CUDA_ARCHS:-90a}"
  fi
fi
[[ $# -gt 0 ]] && { experiment="$1"; shift; }

bash "$repo_root/scripts/setup.sh"
bash "$repo_root/scripts/build.sh" "$build_dir"
status=0
"$build_dir/bin/mlalab" ab "$experiment" --out "$repo_root/results" "$@" || status=$?
# Exit status 1 means the run worked and a variant was REJECTED: a result, not a failure.
if [[ $status -eq 1 ]]; then
  echo "run_main: a variant was REJECTED (mlalab ab exits 1 for that, so CI can gate on it)"
  status=0
fi
exit $status
