"""The Triton MLA decode kernel (mlalab.triton_decode) against the float64 reference: on the
CPU through Triton's interpreter, on CUDA as compiled; its split rule and its shared-memory
pruning."""
import json
import os
import subprocess
import sys

import pytest
import torch

triton = pytest.importorskip(
    "triton", reason="triton is not installed (it comes with torch from PyPI on Linux x86-64)")

from mlalab import triton_decode  # noqa: E402
from mlalab.triton_decode import TritonConfig, num_splits  # noqa: E402
from mlalab.problems import assert_matches, make_problem, poisoned_outputs  # noqa: E402

CUDA = pytest.mark.skipif(
    not torch.cuda.is_available(),
    reason="no CUDA device (torch.cuda.is_available() is False): the compiled kernel runs on a "
           "GPU machine; test_matches_the_reference_in_the_interpreter checks it here")

# layout, lengths, heads, page size, sinks, config: empty and one-token sequences, page and
# step boundaries, one split and many, BLOCK_N 16 and 32, a head block partly past the heads.
CASES = [
    ("v3", [1, 64, 65, 300], 16, 64, False, TritonConfig()),
    ("v4", [0, 129, 40], 20, 1, True, TritonConfig(block_n=32, target_ctas=64)),
    ("v3", [17, 0, 200], 32, 16, True, TritonConfig(block_h=32, target_ctas=1)),
]


def test_split_count_follows_target_ctas():
    production = TritonConfig()  # BLOCK_N 16, BLOCK_H 16, TARGET_CTAS 512
    assert num_splits(production, batch=1, heads=16, max_context=4096) == 256  # steps cap 512
    assert num_splits(production, batch=8, heads=16, max_context=4096) == 64
    assert num_splits(production, batch=64, heads=16, max_context=4096) == 8
    assert num_splits(production, batch=80, heads=16, max_context=4096) == 7
    assert num_splits(production, batch=128, heads=16, max_context=4096) == 4
    assert num_splits(production, batch=1024, heads=16, max_context=4096) == 1
    assert num_splits(production, batch=1, heads=128, max_context=4096) == 64  # 8 head blocks
    assert num_splits(production, batch=1, heads=16, max_context=20) == 2
    assert num_splits(production, batch=4, heads=16, max_context=0) == 1


def test_config_errors_name_the_knob_and_its_range():
    with pytest.raises(ValueError, match="block_n = 24: must be a power of two, at least 16"):
        TritonConfig(block_n=24)
    with pytest.raises(ValueError, match="num_warps = 3"):
        TritonConfig(num_warps=3)
    with pytest.raises(ValueError, match="target_ctas = 0"):
        TritonConfig(target_ctas=0)
    with pytest.raises(ValueError, match="576.*512"):
        triton_decode.mla_decode_triton(torch.zeros(1, 16, 300), torch.zeros(1, 64, 300),
                                        torch.zeros(1, 1, dtype=torch.int32),
                                        torch.ones(1, dtype=torch.int32), 0.1)


# Run in a process of its own: TRITON_INTERPRET is read when the kernels are defined.
_INTERPRETED_CASE = r"""
import json, sys
import torch
from mlalab.triton_decode import TritonConfig, mla_decode_triton
from mlalab.problems import Problem, assert_matches, make_problem
layout, lengths, heads, page_size, sinks, config = json.loads(sys.argv[1])
problem = make_problem(layout, lengths, heads, page_size, seed=5, sinks=sinks)
# The interpreter computes with NumPy, which has no bfloat16: the same kernel code runs on
# float32 copies of the bf16 inputs (the reference reads the bf16 originals).
wide = Problem(q=problem.q.float(), kv_cache=problem.kv_cache.float(),
               block_table=problem.block_table, seq_lens=problem.seq_lens,
               softmax_scale=problem.softmax_scale, sinks=problem.sinks)
out = torch.full((len(lengths), heads, 512), float("nan"))
lse = torch.full((len(lengths), heads), float("nan"))
mla_decode_triton(wide.q, wide.kv_cache, wide.block_table, wide.seq_lens, wide.softmax_scale,
                  wide.sinks, out=out, lse=lse, config=TritonConfig(**config))
assert_matches(out, lse, problem)
"""


# A loop whose bounds are tensors, as the kernel's split loop. Triton's interpreter holds scalars
# as one-element arrays, which NumPy 2.4 no longer converts to an index: Triton 3.6 then fails
# every such loop (3.9 does not); the kernel cannot be interpreted there at all.
_INTERPRETER_PROBE = r"""
import torch, triton, triton.language as tl
@triton.jit
def count(bounds, out):
    total = 0
    for _ in tl.range(tl.load(bounds), tl.load(bounds + 1)):
        total += 1
    tl.store(out, total)
out = torch.zeros(1, dtype=torch.int32)
count[(1,)](torch.tensor([2, 5], dtype=torch.int32), out)
assert out.item() == 3, out
"""


def _interpret(script: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", script, *args],
                          env={**os.environ, "TRITON_INTERPRET": "1"}, capture_output=True,
                          text=True, timeout=600)


@pytest.fixture(scope="module")
def interpreter():
    probe = _interpret(_INTERPRETER_PROBE)
    if probe.returncode == 0:
        return
    if "only 0-dimensional arrays can be converted" in probe.stderr:  # that failure, no other
        import numpy
        pytest.skip(f"Triton {triton.__version__}'s interpreter cannot run a loop with tensor "
                    f"bounds under NumPy {numpy.__version__}; the CUDA tests check the kernel "
                    "compiled")
    pytest.fail(f"the interpreter probe failed (exit status {probe.returncode}): "
                f"{probe.stderr[-2000:]}")


@pytest.mark.parametrize("layout,lengths,heads,page_size,sinks,config", CASES)
def test_matches_the_reference_in_the_interpreter(interpreter, layout, lengths, heads,
                                                  page_size, sinks, config):
    case = json.dumps([layout, lengths, heads, page_size, sinks, config.__dict__])
    result = _interpret(_INTERPRETED_CASE, case)
    assert result.returncode == 0, result.stderr[-3000:]


@CUDA
@pytest.mark.parametrize("layout,lengths,heads,page_size,sinks,config", CASES + [
    ("v3", [4096] * 4, 16, 64, False, TritonConfig(num_warps=8)),
    ("v4", [1, 5000], 128, 64, True, TritonConfig(num_stages=3)),
])
def test_matches_the_reference_on_cuda(layout, lengths, heads, page_size, sinks, config):
    problem = make_problem(layout, lengths, heads, page_size, seed=9, sinks=sinks).to("cuda")
    out, lse = poisoned_outputs(problem)
    triton_decode.mla_decode_triton(problem.q, problem.kv_cache, problem.block_table,
                                    problem.seq_lens, problem.softmax_scale, problem.sinks,
                                    out=out, lse=lse, config=config,
                                    max_context=max(lengths))
    torch.cuda.synchronize()
    assert_matches(out, lse, problem)


@CUDA
def test_judge_prunes_what_exceeds_the_shared_memory_limit():
    # Each config's shared memory is what Triton compiled for it; a limit between those of
    # BLOCK_N 16 and 32 prunes the larger tile, saying why, as the study's 99 KB limit did.
    small = triton_decode.judge(TritonConfig(block_n=16), "v4", smem_limit=1 << 30)
    large = triton_decode.judge(TritonConfig(block_n=32), "v4", smem_limit=1 << 30)
    assert small.feasible and large.feasible and 0 < small.smem_bytes < large.smem_bytes
    limit = (small.smem_bytes + large.smem_bytes) // 2
    assert triton_decode.judge(TritonConfig(block_n=16), "v4", smem_limit=limit).feasible
    pruned = triton_decode.judge(TritonConfig(block_n=32), "v4", smem_limit=limit)
    assert not pruned.feasible
    assert pruned.reason == f"needs {large.smem_bytes:,} B of shared memory, limit {limit:,} B"
    with pytest.raises(ValueError, match="layout 'v5'"):
        triton_decode.judge(TritonConfig(), "v5")


@CUDA
def test_the_arm_refuses_a_config_over_its_smem_limit():
    problem = make_problem("v4", [100, 300], 16, 64, seed=2).to("cuda")
    problem.out, problem.lse = poisoned_outputs(problem)
    problem.layout, problem.max_context = "v4", 300
    needs = triton_decode.judge(TritonConfig(block_n=32), "v4", smem_limit=1 << 30).smem_bytes
    with pytest.raises(ValueError, match=f"pruned: needs {needs:,} B of shared memory"):
        triton_decode.arm(problem, {"block_n": 32, "smem_limit": needs - 1})
    launch = triton_decode.arm(problem, {"block_n": 32, "smem_limit": needs})
    launch()
    torch.cuda.synchronize()
    assert_matches(problem.out, problem.lse, problem)
