"""Python arms for the worker's tests (test_worker.py): mlalab's own op, and one that is wrong."""
import mlalab


def mlalab_op(problem, params):
    return lambda: mlalab.mla_decode(problem.q, problem.kv_cache, problem.block_table,
                                     problem.seq_lens, problem.softmax_scale,
                                     sinks=problem.sinks, out=problem.out, lse=problem.lse)


def wrong_scale(problem, params):
    """The op with its softmax scale off by params["factor"]: must be found INVALID."""
    scale = problem.softmax_scale * params["factor"]
    return lambda: mlalab.mla_decode(problem.q, problem.kv_cache, problem.block_table,
                                     problem.seq_lens, scale, sinks=problem.sinks,
                                     out=problem.out, lse=problem.lse)
