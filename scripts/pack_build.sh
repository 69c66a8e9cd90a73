#!/usr/bin/env bash
# Packs a build's two binaries for a machine that runs them but does not build them (the
# device tool's GPU machine: a working tree travels with at most 64 MiB, so the binaries go
# stripped and xz-compressed in an ignored folder named in `carry`).
#   bash scripts/pack_build.sh [--bin-only] BUILD_DIR ARCHIVE.txz
# There, `mkdir -p DIR && tar -xJf ARCHIVE.txz -C DIR` gives DIR/bin/mlalab and, where the
# build has tests, DIR/tests/mlalab_gpu_tests: the layout scripts/gpu_session.sh expects of a
# BUILD_DIR. --bin-only leaves the tests out (half the archive: a lab's baseline arm or a
# bench needs bin/mlalab alone, and a call's carry is bounded).
set -euo pipefail
with_tests=1
if [ "${1:-}" = --bin-only ]; then
  with_tests=0
  shift
fi
build_dir=${1:?build dir}
archive=${2:?archive (.txz)}
staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT
mkdir -p "$staging/bin"
cp "$build_dir/bin/mlalab" "$staging/bin/"
members=(bin/mlalab)
if [ "$with_tests" = 1 ] && [ -x "$build_dir/tests/mlalab_gpu_tests" ]; then
  mkdir -p "$staging/tests"
  cp "$build_dir/tests/mlalab_gpu_tests" "$staging/tests/"
  members+=(tests/mlalab_gpu_tests)
fi
for member in "${members[@]}"; do strip "$staging/$member"; done
mkdir -p "$(dirname "$archive")"
tar -cJf "$archive" -C "$staging" "${members[@]}"
echo "pack_build: ${members[*]} of $build_dir -> $archive ($(du -h "$archive" | cut -f1))"
