"""The package on CUDA tensors: the kernels against the float64 reference, and the dispatcher
under torch.cuda.graph capture and replay with changing lengths."""
import math

import pytest
import torch

import mlalab
from mlalab.problems import assert_matches, make_problem, poisoned_outputs

pytestmark = pytest.mark.skipif(
    not torch.cuda.is_available(),
    reason="no CUDA device (torch.cuda.is_available() is False): the CUDA path runs on a GPU "
           "machine, the CPU tests cover the package here")

CASES = [
    # layout, lengths, heads, page size, sinks
    ("v3", [1, 64, 65, 4097], 16, 64, False),
    ("v4", [0, 129, 2000], 16, 64, True),
    ("v3", [33, 0, 1000, 5000], 128, 64, False),
    ("v3", [300, 1], 128, 1, False),
    ("v4", [257, 3000], 17, 16, True),
]


@pytest.mark.parametrize("layout,lengths,heads,page_size,sinks", CASES)
def test_cuda_kernels_match_the_reference(layout, lengths, heads, page_size, sinks):
    problem = make_problem(layout, lengths, heads, page_size, seed=sum(lengths) % 1000,
                           sinks=sinks).to("cuda")
    out, lse = poisoned_outputs(problem)
    mlalab.mla_decode(problem.q, problem.kv_cache, problem.block_table, problem.seq_lens,
                      problem.softmax_scale, sinks=problem.sinks, out=out, lse=lse)
    torch.cuda.synchronize()
    assert_matches(out, lse, problem)


def test_runs_on_the_current_stream():
    # The side stream first sleeps, then writes q: only a launch on that stream sees q. (The
    # legacy default stream would not wait for a non-blocking side stream.)
    problem = make_problem("v3", [500, 900], 16, 64, seed=11).to("cuda")
    q = problem.q
    problem.q = torch.full_like(q, math.nan)
    out, lse = poisoned_outputs(problem)
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        torch.cuda._sleep(50_000_000)  # cycles: tens of milliseconds
        problem.q.copy_(q)
        mlalab.mla_decode(problem.q, problem.kv_cache, problem.block_table, problem.seq_lens,
                          problem.softmax_scale, out=out, lse=lse)
    stream.synchronize()
    assert_matches(out, lse, problem)


def test_strided_views_are_read_and_written_in_place():
    from test_cpu import strided_call
    problem = make_problem("v3", [70, 3000], 128, 64, seed=14).to("cuda")
    wide_out, out, lse = strided_call(problem)
    torch.cuda.synchronize()
    assert_matches(out, lse, problem)
    assert torch.isnan(wide_out[..., :512].float()).all(), "nothing written beside out"
    assert torch.isnan(wide_out[..., 1024:].float()).all(), "nothing written beside out"


def test_a_dispatcher_of_another_problem_is_refused_naming_both():
    dispatcher = mlalab.Dispatcher("v3", 128, 64)
    problem = make_problem("v3", [100], 16, 64, seed=15).to("cuda")
    with pytest.raises(ValueError, match="serves layout v3, 128 heads, page size 64; this call "
                                         "is layout v3, 16 heads, page size 64"):
        mlalab.mla_decode(problem.q, problem.kv_cache, problem.block_table, problem.seq_lens,
                          problem.softmax_scale, dispatcher=dispatcher)


@pytest.mark.parametrize("split", ["heuristic", "balanced"])
@pytest.mark.parametrize("layout,heads", [("v3", 16), ("v3", 128), ("v4", 16)])
def test_graph_capture_replays_with_fresh_lengths(layout, heads, split):
    page_size, max_context = 64, 2048
    batches = (1, 8, 64)
    dispatcher = mlalab.Dispatcher(layout, heads, page_size, split=split)
    dispatcher.prepare([(batch, max_context) for batch in batches])
    generator = torch.Generator().manual_seed(heads)
    for batch in batches:
        assert dispatcher.resolution(batch, max_context) is not None
        problem = make_problem(layout, [max_context] * batch, heads, page_size,
                               seed=batch, sinks=layout == "v4").to("cuda")
        out, lse = poisoned_outputs(problem)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            mlalab.mla_decode(problem.q, problem.kv_cache, problem.block_table,
                              problem.seq_lens, problem.softmax_scale, sinks=problem.sinks,
                              out=out, lse=lse, dispatcher=dispatcher, max_context=max_context)
        for _ in range(3):
            lengths = torch.randint(0, max_context + 1, (batch,), generator=generator,
                                    dtype=torch.int32)
            problem.seq_lens.copy_(lengths)
            out.fill_(math.nan)
            lse.fill_(math.nan)
            graph.replay()
            torch.cuda.synchronize()
            assert_matches(out, lse, problem)


def test_an_unprepared_key_in_capture_raises_and_the_capture_survives():
    dispatcher = mlalab.Dispatcher("v3", 16, 64)
    dispatcher.prepare([(2, 1024)])
    problem = make_problem("v3", [1000, 20], 16, 64, seed=12).to("cuda")
    out, lse = poisoned_outputs(problem)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        with pytest.raises(RuntimeError, match="batch 2, max context 4096"):
            mlalab.mla_decode(problem.q, problem.kv_cache, problem.block_table,
                              problem.seq_lens, problem.softmax_scale, out=out, lse=lse,
                              dispatcher=dispatcher, max_context=4096)
        mlalab.mla_decode(problem.q, problem.kv_cache, problem.block_table, problem.seq_lens,
                          problem.softmax_scale, out=out, lse=lse, dispatcher=dispatcher,
                          max_context=1024)
    graph.replay()
    torch.cuda.synchronize()
    assert_matches(out, lse, problem)


def test_compiled_callers_see_the_op():
    problem = make_problem("v3", [700, 33], 16, 64, seed=13).to("cuda")

    @torch.compile(fullgraph=True)
    def attention(q, kv_cache, block_table, seq_lens):
        out, lse = mlalab.mla_decode(q * 1, kv_cache, block_table, seq_lens,
                                     problem.softmax_scale)
        return out, lse

    out, lse = attention(problem.q, problem.kv_cache, problem.block_table, problem.seq_lens)
    torch.cuda.synchronize()
    assert_matches(out, lse, problem)
