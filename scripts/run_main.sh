#!/usr/bin/env bash
# Sets up, builds, and runs the main job: an A/B experiment of the lab, written to results/.
#   with a GPU:    mlalab ab experiments/occupancy.toml  (the study: 8 warps, 3 stages)
#   without one:   mlalab ab experiments/cpu-demo.toml   (the same pipeline on the CPU backend)
#   bash scripts/run_main.sh [EXPERIMENT.toml [ab options...]]
# It builds into build/ without the tests. Without a GPU it builds the small selection that
# scripts/test.sh builds too (the CPU backend needs no kernel variant), so that the README's
# second command reuses this build. MLALAB_VARIANTS and MLALAB_CUDA_ARCHS override the
# selection (see scripts/build.sh).
# Exit status: mlalab ab's (see mlalab ab --help), except that 1, a variant REJECTED, is a
# result and exits 0; an arm INVALID (3), a partial run (4) or an error (2) fail.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

build_dir="$repo_root/build"
experiment="$repo_root/experiments/occupancy.toml"
if ! have_gpu; then
  echo "run_main: no GPU found: the A/B demo runs on the CPU backend (experiments/cpu-demo.toml)"
  experiment="$repo_root/experiments/cpu-demo.toml"
  export MLALAB_VARIANTS="${MLALAB_VARIANTS:-$ci_variants}"
  export MLALAB_CUDA_ARCHS="${MLALAB_CUDA_ARCHS:-$ci_cuda_archs}"
fi
[[ $# -gt 0 ]] && { experiment="$1"; shift; }

bash "$repo_root/scripts/setup.sh"
MLALAB_BUILD_TESTS=OFF bash "$repo_root/scripts/build.sh" "$build_dir"
status=0
"$build_dir/bin/mlalab" ab "$experiment" --out "$repo_root/results" "$@" || status=$?
case $status in
  0) ;;
  1) echo "run_main: a variant was REJECTED: a result of the experiment, not a failure"
     status=0 ;;
  3) echo "run_main: an arm was INVALID (wrong results, or no valid sample): see the report" >&2 ;;
  4) echo "run_main: the run is partial (interrupted, or out of budget): see the report" >&2 ;;
  *) echo "run_main: mlalab ab failed with exit status $status" >&2 ;;
esac
exit $status
