#!/bin/bash
# What a split costs the swapped kernel at 16 heads: `mlalab bench` of a build with
# split-cost-hack.patch (main plus a timing hack: every launch after a process's first, the
# bench's check, skips the combine with MLALAB_HACK=nocombine, and the partial rows' stores
# too with nopartial; the outputs are then wrong, which the check before never sees), one
# process per batch and mode. Sourced by a device call after session_steps.sh and
# session_folder, with build-hack unpacked (scripts/pack_build.sh of MLALAB_VARIANTS=
# '^wgmma_h16_t64_w4_s2$' MLALAB_CUDA_ARCHS=90a MLALAB_BUILD_TESTS=OFF with the patch applied).
for batch in 8 32 64; do
  for mode in full nocombine nopartial; do
    hack=(env MLALAB_HACK="$mode")
    [ "$mode" = full ] && hack=(env -u MLALAB_HACK)
    step "split_cost_b${batch}_$mode" "${hack[@]}" build-hack/bin/mlalab bench \
      --heads 16 --batch "$batch" --context 4096 --variant wgmma_h16_t64_w4_s2 \
      --json "$out/split_cost_b${batch}_$mode.json"
  done
done
