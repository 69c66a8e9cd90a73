#!/bin/bash
# Builds, into the ignored build-d/, what the device calls left by session 52 carry (a fresh
# checkout has none of it): head.txz / headbin.txz (main, all variants, sm_90a; with the GPU
# tests / bin/mlalab alone), base60.txz (main before version 60, e610732: the two variants of
# ../2026-12-06-l2-promotion/'s labs), hack.txz (main with
# ../2026-12-07-launch-floor/split-cost-hack.patch, the swapped kernel alone), launch_floor (the
# floor's microbenchmark) and disc.txz (main with ../2026-12-07-discard/v65b.patch, all variants,
# with tests). The patched and older builds come from git worktrees under /tmp. Run from the
# repository root, after scripts/setup.sh; with ccache warm the rebuilds are quick, cold ~40 min
# on two cores.
#   bash docs/results/2026-12-07-h200-v63/prepare.sh [head base60 hack floor disc]  (default all)
set -euo pipefail
root=$(pwd)
mkdir -p build-d
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(head base60 hack floor disc)

# worktree_build NAME REVISION PATCH VARIANTS TESTS: REVISION (+ PATCH) built into build-NAME
worktree_build() {
  local tree=/tmp/mlalab-prepare-$1
  git worktree remove --force "$tree" 2>/dev/null || true
  rm -rf "$root/build-$1"  # its CMake cache names another source folder
  git worktree add --detach "$tree" "$2" > /dev/null
  [ -n "$3" ] && git -C "$tree" apply "$root/$3"
  (cd "$tree" && MLALAB_VARIANTS="$4" MLALAB_CUDA_ARCHS=90a MLALAB_BUILD_TESTS="$5" \
    bash scripts/build.sh "$root/build-$1")
  git worktree remove --force "$tree"
}

for target in "${targets[@]}"; do
  case "$target" in
    head)
      MLALAB_CUDA_ARCHS=90a bash scripts/build.sh build-main90
      bash scripts/pack_build.sh build-main90 build-d/head.txz
      bash scripts/pack_build.sh --bin-only build-main90 build-d/headbin.txz ;;
    base60)
      worktree_build base60 e610732 "" '^(wgmma_h16_t64_w4_s2|wgmma_h64_t64_w8_s2)$' OFF
      bash scripts/pack_build.sh build-base60 build-d/base60.txz ;;
    hack)
      worktree_build hack HEAD docs/results/2026-12-07-launch-floor/split-cost-hack.patch \
        '^wgmma_h16_t64_w4_s2$' OFF
      bash scripts/pack_build.sh build-hack build-d/hack.txz ;;
    floor)
      nvcc -std=c++20 -O3 -gencode=arch=compute_90a,code=sm_90a -Isrc -Xcompiler \
        -static-libstdc++ -Xcompiler -static-libgcc -o build-d/launch_floor \
        docs/results/2026-12-07-launch-floor/launch_floor.cu src/kernels/wgmma/tensor_maps.cpp ;;
    disc)
      worktree_build disc HEAD docs/results/2026-12-07-discard/v65b.patch '.*' ON
      bash scripts/pack_build.sh build-disc build-d/disc.txz ;;
    *) echo "prepare.sh: unknown target '$target' (head base60 hack floor disc)" >&2; exit 2 ;;
  esac
done
ls -la build-d
