#!/usr/bin/env bash
# Configures (Release, Ninja) and builds mlalab into BUILD_DIR (default: build/).
#   bash scripts/build.sh [BUILD_DIR]
# Environment:
#   MLALAB_VARIANTS     regex on kernel variant names, e.g. '^(h16_t16_w4_s2|h64_.*)$'
#                       (default: all)
#   MLALAB_CUDA_ARCHS   CUDA architectures, ';'-separated (default: '90a;80;120')
#   MLALAB_BUILD_TESTS  ON (default) or OFF: the test binaries are 40 % of a small build
#   MLALAB_TIMELINE     OFF (default) or ON: kernels record per-CTA timelines for
#                       mlalab bench --timeline (their code hashes then differ)
# Run scripts/setup.sh first on a fresh machine. With ccache installed (setup.sh installs it),
# every build folder shares compiled objects.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ensure_nvcc

build_dir="${1:-$repo_root/build}"
variants="${MLALAB_VARIANTS:-.*}"
archs="${MLALAB_CUDA_ARCHS:-90a;80;120}"
tests="${MLALAB_BUILD_TESTS:-ON}"
timeline="${MLALAB_TIMELINE:-OFF}"
jobs="$(nproc)"

echo "build: $build_dir: variants '$variants', CUDA archs '$archs', tests $tests, timeline $timeline, $jobs jobs"
cmake -S "$repo_root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DMLALAB_VARIANTS="$variants" -DMLALAB_CUDA_ARCHS="$archs" -DMLALAB_BUILD_TESTS="$tests" \
  -DMLALAB_TIMELINE="$timeline"
cmake --build "$build_dir" -j "$jobs"
echo "build: done: $build_dir/bin/mlalab"
