#!/usr/bin/env bash
# The Python package's tests (python/tests): builds the package into a virtual environment and
# runs pytest. Called by scripts/test.sh; runs alone as well.
#   bash scripts/test_python.sh [JUNIT_XML]
# Environment:
#   MLALAB_VARIANTS, MLALAB_CUDA_ARCHS   what the package compiles (default: CI's selection)
#   MLALAB_PYTHON_VENV                   the environment (default: build/python-venv)
# torch comes from the system's Python when it has one (the environment sees its packages),
# else from PyPI (about 2.5 GB with its CUDA libraries, a minute on a fast link). When it can be
# neither imported nor installed, the tests are skipped and the reason is written to the JUnit
# file and printed; that is not a failure.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
ensure_nvcc

junit="$(realpath -m "${1:-$repo_root/build/test-results/python.xml}")"
venv="${MLALAB_PYTHON_VENV:-$repo_root/build/python-venv}"
export MLALAB_VARIANTS="${MLALAB_VARIANTS:-$ci_variants}"
export MLALAB_CUDA_ARCHS="${MLALAB_CUDA_ARCHS:-$ci_cuda_archs}"
mkdir -p "$(dirname "$junit")"

skip_all() {
  echo "python tests: skipped: $1"
  python3 - "$junit" "$1" <<'PY'
import sys
from xml.sax.saxutils import quoteattr
path, reason = sys.argv[1:]
with open(path, "w") as junit:
    junit.write('<testsuite name="python" tests="1" skipped="1"><testcase name="python/tests">'
                f'<skipped message={quoteattr(reason)}/></testcase></testsuite>\n')
PY
  exit 0
}

if [[ ! -x "$venv/bin/python" ]]; then
  python3 -m venv --system-site-packages "$venv" ||
    skip_all "cannot create a virtual environment with python3 -m venv (Debian: apt-get install python3-venv)"
fi
python="$venv/bin/python"
if ! "$python" -c "import torch" 2>/dev/null; then
  echo "python tests: torch is missing: installing it from PyPI into $venv"
  "$python" -m pip install -q torch ||
    skip_all "torch is not installed and could not be installed from PyPI (pip install torch failed)"
fi
"$python" -m pip install -q "scikit-build-core>=0.10" "pytest>=7" numpy ||  # numpy: torch warns without it
  skip_all "scikit-build-core, pytest or numpy could not be installed from PyPI"
echo "python tests: building the package (variants '$MLALAB_VARIANTS', archs '$MLALAB_CUDA_ARCHS')"
# As a user installs it (torch and scikit-build-core are there now, so it installs only mlalab).
PYTHON="$python" bash "$repo_root/scripts/install_python.sh"
cd "$repo_root/python/tests"
"$python" -m pytest -q -rs --junitxml="$junit" .
