#!/usr/bin/env bash
# Sets up, builds, and runs the main job: `mlalab bench`, which validates and times the
# default kernel variant (the binary says when it falls back to the CPU backend: no GPU).
#   bash scripts/run_main.sh [bench options...]      e.g. --variant all --json results.json
# MLALAB_VARIANTS and MLALAB_CUDA_ARCHS select what is built (see scripts/build.sh).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

build_dir="$repo_root/build"
bash "$repo_root/scripts/setup.sh"
bash "$repo_root/scripts/build.sh" "$build_dir"
"$build_dir/bin/mlalab" bench "$@"
