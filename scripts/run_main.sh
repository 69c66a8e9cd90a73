#!/usr/bin/env bash
# Sets up, builds, and runs the main job: `mlalab bench`, which validates and times the
# default kernel variant (the binary says when it falls back to the CPU backend: no GPU).
#   bash scripts/run_main.sh [bench options...]      e.g. --variant all --json results.json
# MLALAB_VARIANTS and MLALAB_CUDA_ARCHS select what is built (see scripts/build.sh).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

build_dir="$repo_root/build"
# Without a GPU the job runs on the CPU backend, so every kernel variant and architecture
# would be compiled for nothing: build the test selection instead, unless told otherwise.
if ! nvidia-smi -L >/dev/null 2>&1 && [[ -z "${MLALAB_VARIANTS:-}" ]]; then
  echo "run_main: no GPU found: building a small kernel selection (set MLALAB_VARIANTS='.*' for all)"
  export MLALAB_VARIANTS='h16_t16_w4_s2|h64_t32_w8_s2'
  export MLALAB_CUDA_ARCHS="${MLALAB_CUDA_ARCHS:-90a}"
fi
bash "$repo_root/scripts/setup.sh"
bash "$repo_root/scripts/build.sh" "$build_dir"
"$build_dir/bin/mlalab" bench "$@"
