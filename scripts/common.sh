# Sourced by the scripts beside it: where the repository is, how to find nvcc, and the kernel
# selection that CI and machines without a GPU build. Changes nothing but PATH.

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

# The smallest and the largest portable tile, the wgmma family's two defaults (the seesaw
# and the lockstep tile) and its swapped kernel, for the sm_90a only: what the tests need, and what both of the
# README's commands build without a GPU, so that the second reuses the first's build (one
# folder, build/).
ci_variants='^(h16_t16_w4_s2|h64_t32_w8_s2|wgmma_h64_t32_w8_s4|wgmma_h64_t64_w8_s2|wgmma_h16_t64_w4_s2)$'
ci_cuda_archs='90a'

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

# Whether this machine has an NVIDIA GPU that a driver can see.
have_gpu() {
  nvidia-smi -L >/dev/null 2>&1
}
