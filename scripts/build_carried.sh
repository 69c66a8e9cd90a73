#!/usr/bin/env bash
# Builds a binary set for a device call's carry (sm_90a only) from a clean checkout of a
# revision, with a results folder's patches applied: the build a lab or a landing names, as
# the commit it reports, whatever this checkout holds uncommitted.
#   bash scripts/build_carried.sh NAME [--rev REV] [--patch FILE]... [--variants REGEX] [--tests]
# Gives build-NAME/ (bin/mlalab, with --tests the GPU tests too) and build-d/NAME.txz
# (scripts/pack_build.sh; carry it as "build-d/NAME.txz", and a call script's begin_call NAME
# unpacks it). The source is a git worktree in build-NAME-src/ (ignored), made again each time.
#   REV        the revision (default HEAD)
#   --patch    applied in the order given (git apply), e.g. a version kept as a patch and the
#              one built on it
#   --variants MLALAB_VARIANTS (default: all)
#   --tests    build the tests too and carry the GPU tests (default: bin/mlalab alone)
# A full build of every variant takes ~12 minutes on two cores, two variants ~4.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

usage() { sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }
[ $# -ge 1 ] || usage
case $1 in -h | --help) usage 0 ;; -*) usage ;; esac
name=$1
shift
revision=HEAD variants='.*' tests=OFF patches=()
while [ $# -gt 0 ]; do
  case $1 in
    --rev) revision=${2:?--rev needs a revision}; shift 2 ;;
    --patch) patches+=("$(realpath "${2:?--patch needs a file}")"); shift 2 ;;
    --variants) variants=${2:?--variants needs a regex}; shift 2 ;;
    --tests) tests=ON; shift ;;
    -h | --help) usage 0 ;;
    *) echo "build_carried: unknown argument '$1'" >&2; usage ;;
  esac
done

commit=$(git -C "$repo_root" rev-parse --verify "$revision^{commit}")
source_dir=$repo_root/build-$name-src
build_dir=$repo_root/build-$name
git -C "$repo_root" worktree remove --force "$source_dir" 2> /dev/null || rm -rf "$source_dir"
git -C "$repo_root" worktree prune
git -C "$repo_root" worktree add --quiet --detach "$source_dir" "$commit"
for patch in "${patches[@]}"; do
  git -C "$source_dir" apply "$patch" || {
    echo "build_carried: $patch does not apply on $(git -C "$source_dir" log -1 --format=%h)" \
         "after the patches before it" >&2
    exit 1
  }
done
echo "build_carried: $name = $(git -C "$source_dir" log -1 --format='%h %s')" \
     "${patches[*]:+with ${#patches[@]} patch(es)}"
MLALAB_VARIANTS="$variants" MLALAB_BUILD_TESTS="$tests" MLALAB_CUDA_ARCHS=90a \
  bash "$source_dir/scripts/build.sh" "$build_dir"
pack_options=()
[ "$tests" = ON ] || pack_options=(--bin-only)
bash "$repo_root/scripts/pack_build.sh" "${pack_options[@]}" "$build_dir" \
  "$repo_root/build-d/$name.txz"
