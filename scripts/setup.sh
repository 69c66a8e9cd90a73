#!/usr/bin/env bash
# Installs what building and testing mlalab needs, from Debian packages, and only what is
# missing: a second run changes nothing and touches no package list. Root (or sudo) is needed
# only when something is missing. The CUDA toolkit is not among them: it must already be
# installed (nvcc on PATH, or in /usr/local/cuda or $CUDA_HOME).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

packages=(cmake ninja-build g++ libgtest-dev libcli11-dev nlohmann-json3-dev libfmt-dev
          libtomlplusplus-dev libssl-dev ccache libboost-math-dev)

missing=()
for package in "${packages[@]}"; do
  if ! dpkg -s "$package" 2>/dev/null | grep -q '^Status: install ok installed'; then
    missing+=("$package")
  fi
done

if ((${#missing[@]} > 0)); then
  echo "setup: installing ${missing[*]}"
  as_root=()
  if ((EUID != 0)); then
    if ! command -v sudo >/dev/null 2>&1; then
      echo "error: installing ${missing[*]} needs root, and there is no sudo" >&2
      exit 1
    fi
    as_root=(sudo)
  fi
  "${as_root[@]}" apt-get update -q
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends "${missing[@]}"
else
  echo "setup: all ${#packages[@]} packages present"
fi

ensure_nvcc
echo "setup: nvcc $(nvcc --version | grep -o "release [0-9.]*") at $(command -v nvcc)"
