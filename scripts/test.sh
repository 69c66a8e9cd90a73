#!/usr/bin/env bash
# Sets up, builds a CI-sized selection of kernel variants, and runs every test.
#   bash scripts/test.sh
# Environment (defaults sized for a 2-core machine without a GPU, and the same as
# scripts/run_main.sh builds there, into the same folder build/, so one reuses the other):
#   MLALAB_VARIANTS    default '^(h16_t16_w4_s2|h64_t32_w8_s2|wgmma_h64_t32_w8_s4|wgmma_h64_t64_w8_s2|wgmma_h16_t64_w4_s2)$':
#                      the smallest and the largest portable tile, and the wgmma family's
#                      two defaults
#   MLALAB_CUDA_ARCHS  default '90a'
# Then the Python package's tests (scripts/test_python.sh). Tests labelled gpu, and the Python
# tests of the CUDA path, skip with the reason where there is no GPU. The summary at the end
# counts what passed, failed and skipped in each group, with the reasons for the skips.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

export MLALAB_VARIANTS="${MLALAB_VARIANTS:-$ci_variants}"
export MLALAB_CUDA_ARCHS="${MLALAB_CUDA_ARCHS:-$ci_cuda_archs}"
build_dir="$repo_root/build"

bash "$repo_root/scripts/setup.sh"
MLALAB_BUILD_TESTS=ON bash "$repo_root/scripts/build.sh" "$build_dir"

# GPU tests first and one at a time (they share the device), then all the others in parallel.
results="$build_dir/test-results"
mkdir -p "$results"
status=0
ctest --test-dir "$build_dir" --output-on-failure -L gpu \
  --output-junit "$results/gpu.xml" || status=1
ctest --test-dir "$build_dir" --output-on-failure -LE gpu -j "$(nproc)" \
  --output-junit "$results/other.xml" || status=1
# The Python package: built into build/python-venv (torch from PyPI when the system has none).
bash "$repo_root/scripts/test_python.sh" "$results/python.xml" || status=1
python3 "$repo_root/scripts/test_summary.py" "gpu=$results/gpu.xml" \
  "cpu and docs=$results/other.xml" "python=$results/python.xml"
exit $status
