"""Python arms for the worker's tests (test_worker.py): mlalab's own op, and one that is wrong."""
import mlalab


def mlalab_op(problem, params, softmax_scale=None):
    """mlalab.mla_decode on the problem; on CUDA through a Dispatcher prepared for the point
    before the worker captures the launch in a graph (the op allocates nothing then)."""
    dispatcher = None
    if problem.q.is_cuda:
        batch, heads, _ = problem.q.shape
        dispatcher = mlalab.Dispatcher(problem.layout, heads=heads, page_size=problem.page_size)
        dispatcher.prepare([(batch, problem.max_context)])
    scale = problem.softmax_scale if softmax_scale is None else softmax_scale
    return lambda: mlalab.mla_decode(
        problem.q, problem.kv_cache, problem.block_table, problem.seq_lens, scale,
        sinks=problem.sinks, out=problem.out, lse=problem.lse, dispatcher=dispatcher,
        max_context=problem.max_context if dispatcher else None)


def wrong_scale(problem, params):
    """The op with its softmax scale off by params["factor"]: must be found INVALID."""
    return mlalab_op(problem, params, softmax_scale=problem.softmax_scale * params["factor"])
