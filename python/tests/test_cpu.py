"""The package on CPU tensors (the CPU backend) against the float64 reference, its errors, and
its ops as torch sees them."""
import math
import re

import pytest
import torch

import mlalab
from mlalab.problems import assert_matches, make_problem, poisoned_outputs

CASES = [
    # layout, lengths, heads, page size, sinks
    ("v3", [1, 64, 65, 300], 16, 64, False),
    ("v4", [0, 129, 7], 16, 64, True),
    ("v3", [33, 0, 100], 128, 1, False),
    ("v4", [257], 17, 16, True),
]


@pytest.mark.parametrize("layout,lengths,heads,page_size,sinks", CASES)
def test_cpu_backend_matches_the_reference(layout, lengths, heads, page_size, sinks):
    problem = make_problem(layout, lengths, heads, page_size, seed=len(lengths) + heads,
                           sinks=sinks)
    out, lse = poisoned_outputs(problem)
    returned = mlalab.mla_decode(problem.q, problem.kv_cache, problem.block_table,
                                 problem.seq_lens, problem.softmax_scale, sinks=problem.sinks,
                                 out=out, lse=lse)
    assert returned[0] is out and returned[1] is lse
    assert_matches(out, lse, problem)


def test_outputs_are_allocated_when_not_given():
    problem = make_problem("v3", [10, 20], 16, 64, seed=3)
    out, lse = mlalab.mla_decode(problem.q, problem.kv_cache, problem.block_table,
                                 problem.seq_lens, problem.softmax_scale)
    assert out.shape == (2, 16, 512) and out.dtype == torch.bfloat16
    assert lse.shape == (2, 16) and lse.dtype == torch.float32
    assert_matches(out, lse, problem)


def strided_call(problem):
    """q as a slice of a wider projection, out as a slice of a wider buffer, the cache with
    the engines' head axis of 1: all read and written in place."""
    batch, heads, d_qk = problem.q.shape
    wide_q = torch.randn(batch, heads, 2 * d_qk, device=problem.q.device).to(torch.bfloat16)
    wide_q[..., d_qk:] = problem.q
    problem.q = wide_q[..., d_qk:]
    wide_out = torch.full((batch, heads, 3 * 512), math.nan, dtype=torch.bfloat16,
                          device=problem.q.device)
    out = wide_out[..., 512:1024]
    lse = torch.full((batch, heads), math.nan, device=problem.q.device)
    mlalab.mla_decode(problem.q, problem.kv_cache.unsqueeze(2), problem.block_table,
                      problem.seq_lens, problem.softmax_scale, out=out, lse=lse)
    return wide_out, out, lse


def test_strided_views_are_read_and_written_in_place():
    problem = make_problem("v4", [70, 5], 16, 64, seed=4)
    wide_out, out, lse = strided_call(problem)
    assert_matches(out, lse, problem)
    assert torch.isnan(wide_out[..., :512].float()).all(), "nothing written beside out"
    assert torch.isnan(wide_out[..., 1024:].float()).all(), "nothing written beside out"


def call(problem, **changes):
    args = dict(q=problem.q, kv_cache=problem.kv_cache, block_table=problem.block_table,
                seq_lens=problem.seq_lens, softmax_scale=problem.softmax_scale)
    args.update(changes)
    return mlalab.mla_decode(**args)


@pytest.mark.parametrize("changes,message", [
    (lambda p: {"q": p.q.float()}, "q [batch, heads, d_qk] must be BFloat16"),
    (lambda p: {"seq_lens": p.seq_lens.long()}, "seq_lens [batch] must be Int"),
    (lambda p: {"softmax_scale": -1.0}, "softmax_scale"),
    (lambda p: {"q": torch.ones(2, 129, 576, dtype=torch.bfloat16),
                "out": torch.full((2, 129, 512), math.nan, dtype=torch.bfloat16),
                "lse": torch.full((2, 129), math.nan)},
     "num_heads = 129: allowed [1, 128]"),
    (lambda p: {"kv_cache": p.kv_cache[:, :, :500]}, "must be as wide as q"),
    (lambda p: {"seq_lens": torch.tensor([10, 10_000], dtype=torch.int32)}, "seq_lens[1]"),
    (lambda p: {"block_table": p.block_table.clone().fill_(999)}, "page_table[0][0] = 999"),
    (lambda p: {"lse": torch.full((2, 32), math.nan)[:, :16]}, "lse must be contiguous"),
    (lambda p: {"sinks": torch.zeros(15)}, "sinks must have one logit per head (16), got 15"),
    (lambda p: {"max_context": 0}, "max_context = 0: allowed [1, "),
])
def test_bad_input_raises_value_error_naming_the_field(changes, message):
    problem = make_problem("v3", [10, 20], 16, 64, seed=5)
    out, lse = poisoned_outputs(problem)
    arguments = {"out": out, "lse": lse, **changes(problem)}
    with pytest.raises(ValueError, match=re.escape(message)):
        call(problem, **arguments)
    written = arguments["out"].float(), arguments["lse"]
    assert all(torch.isnan(t).all() for t in written), "nothing was written"


def test_configs_lists_the_compiled_variants_with_reasons():
    variants = mlalab.configs()
    names = [v.name for v in variants]
    assert names and "h16_t16_w4_s2" in names
    small = {v.name: v for v in mlalab.configs(smem_limit=101_376)}
    for variant in small.values():
        if variant.smem_bytes > 101_376:
            assert not variant.feasible and "101,376 B" in variant.reason
    with pytest.raises(ValueError, match="smem_limit = 0"):
        mlalab.configs(smem_limit=0)
    with pytest.raises(ValueError, match="layout = 'v5'"):
        mlalab.configs(layout="v5")


def test_dispatcher_arguments_are_checked():
    with pytest.raises(ValueError, match="split = 'sometimes'"):
        mlalab.Dispatcher("v3", 16, 64, split="sometimes")
    with pytest.raises(ValueError, match="page_size = 48"):
        mlalab.Dispatcher("v3", 16, 48)
    with pytest.raises(ValueError, match="cannot read"):
        mlalab.Dispatcher("v3", 16, 64, tuning="/nonexistent/table.json")


@pytest.mark.skipif(torch.cuda.is_available(), reason="a CUDA device is visible")
def test_preparing_a_dispatcher_without_a_gpu_says_so():
    dispatcher = mlalab.Dispatcher("v3", 16, 64)
    with pytest.raises(RuntimeError, match="needs a CUDA device, and none is visible"):
        dispatcher.prepare([(8, 1024)])
    assert dispatcher.resolution(8, 1024) is None


def test_the_op_passes_torch_opcheck():
    # schema, fake (meta) registration and in-place aliasing as torch.compile relies on them
    problem = make_problem("v3", [40, 0], 16, 64, seed=6)
    out, lse = poisoned_outputs(problem)
    torch.library.opcheck(
        torch.ops.mlalab.mla_decode.default,
        (problem.q, problem.kv_cache, problem.block_table, problem.seq_lens,
         problem.softmax_scale, None, out, lse, None, 0),
        test_utils=("test_schema", "test_faketensor"))
