# Sourced by the scripts beside it: where the repository is, and how to find nvcc.
# Changes nothing but PATH.

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# The build needs nvcc. A CUDA toolkit installed from NVIDIA's packages lives in
# /usr/local/cuda (or $CUDA_HOME) without being on PATH; put it there when it is not.
ensure_nvcc() {
  local cuda_bin="${CUDA_HOME:-/usr/local/cuda}/bin"
  if ! command -v nvcc >/dev/null 2>&1 && [[ -x "$cuda_bin/nvcc" ]]; then
    export PATH="$cuda_bin:$PATH"
  fi
  if ! command -v nvcc >/dev/null 2>&1; then
    echo "error: nvcc not found: not on PATH and not in $cuda_bin." >&2
    echo "       mlalab's kernels need the CUDA toolkit (13.x): install it, or set CUDA_HOME." >&2
    exit 1
  fi
}
