#!/usr/bin/env bash
# Builds another revision of mlalab into build-prev/ (its binary: build-prev/bin/mlalab), the
# baseline build of experiments/regression*.toml. The revision is checked out in a git
# worktree (build-prev-src/), so this checkout is untouched.
#   bash scripts/build_previous.sh [REVISION]     (default: HEAD~1)
# Environment: as scripts/build.sh (MLALAB_VARIANTS, MLALAB_CUDA_ARCHS); tests are not built.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

revision="${1:-HEAD~1}"
build_dir="$repo_root/build-prev"
source_dir="$repo_root/build-prev-src"
commit="$(git -C "$repo_root" rev-parse --verify "$revision^{commit}")"

mkdir -p "$build_dir"
if [ -d "$source_dir" ]; then
  git -C "$source_dir" checkout --quiet --detach "$commit"
else
  git -C "$repo_root" worktree add --quiet --detach "$source_dir" "$commit"
fi
echo "build_previous: $revision = $(git -C "$source_dir" log -1 --format='%h %s')"
MLALAB_BUILD_TESTS=OFF bash "$source_dir/scripts/build.sh" "$build_dir"
if ! "$build_dir/bin/mlalab" worker --help > /dev/null 2>&1; then
  echo "build_previous: $revision has no 'mlalab worker' (it came with c837b45): its arms" \
       "cannot be worker arms; compare it with command arms instead" >&2
  exit 1
fi
