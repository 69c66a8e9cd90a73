#!/usr/bin/env bash
# Sets up, builds a CI-sized selection of kernel variants, and runs every test.
#   bash scripts/test.sh
# Environment (defaults sized for a 2-core machine without a GPU):
#   MLALAB_VARIANTS    default '^(h16_t16_w4_s2|h64_t32_w8_s2|wgmma_h64_t64_w8_s2)$': the smallest
#                      and the largest portable tile, and the wgmma family's production shape
#   MLALAB_CUDA_ARCHS  default '90a'
# Tests labelled gpu skip, with the reason, where there is no GPU.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

export MLALAB_VARIANTS="${MLALAB_VARIANTS:-^(h16_t16_w4_s2|h64_t32_w8_s2|wgmma_h64_t64_w8_s2)$}"
export MLALAB_CUDA_ARCHS="${MLALAB_CUDA_ARCHS:-90a}"
build_dir="$repo_root/build-test"

bash "$repo_root/scripts/setup.sh"
bash "$repo_root/scripts/build.sh" "$build_dir"

# GPU tests first and one at a time (they share the device), then all the others in parallel.
ctest --test-dir "$build_dir" --output-on-failure -L gpu
# ctest shows no output of skipped tests: print their reasons (e.g. "no CUDA device: ...").
skip_reasons="$(grep -h -A1 ': Skipped$' "$build_dir/Testing/Temporary/LastTest.log" 2>/dev/null |
                grep -v -e ': Skipped$' -e '^--$' | sort | uniq -c || true)"
if [[ -n "$skip_reasons" ]]; then
  echo "test: gpu tests skipped (count, reason):"
  echo "$skip_reasons"
fi
ctest --test-dir "$build_dir" --output-on-failure -LE gpu -j "$(nproc)"
