#!/usr/bin/env bash
# Builds and installs the Python package mlalab into the active Python environment (a virtual
# environment is best), installing what it lacks first: the Debian packages of setup.sh, torch
# from PyPI when it cannot be imported, and scikit-build-core.
#   bash scripts/install_python.sh
# Environment: MLALAB_VARIANTS, MLALAB_CUDA_ARCHS (python/README.md: what is compiled);
# PYTHON, the interpreter (default: python3).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

python="${PYTHON:-python3}"
bash "$repo_root/scripts/setup.sh"
ensure_nvcc  # setup.sh found it, in its own process: put it on this one's PATH for CMake
if ! "$python" -c "import torch" 2>/dev/null; then
  echo "install: torch is missing: installing it from PyPI (about 2.5 GB with its CUDA libraries)"
  "$python" -m pip install torch
fi
"$python" -m pip install "scikit-build-core>=0.10"
"$python" -m pip install --no-build-isolation "$repo_root"
"$python" -c "import mlalab, torch; print('install: mlalab', mlalab.__file__, 'for torch', torch.__version__)"
