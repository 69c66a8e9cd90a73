"""Python arms for the worker's tests (test_worker.py): mlalab's own op, and one that is wrong."""
import mlalab


_dispatchers = {}


def _dispatcher(problem):
    """One Dispatcher per point, shared by the launchers of the worker's copies of its inputs
    (so one workspace, as in an engine's layers and in the lab's kernel arms)."""
    batch, heads, _ = problem.q.shape
    key = (problem.layout, heads, problem.page_size, batch, problem.max_context)
    if key not in _dispatchers:
        _dispatchers.clear()
        dispatcher = mlalab.Dispatcher(problem.layout, heads=heads, page_size=problem.page_size)
        dispatcher.prepare([(batch, problem.max_context)])
        _dispatchers[key] = dispatcher
    return _dispatchers[key]


def mlalab_op(problem, params, softmax_scale=None):
    """mlalab.mla_decode on the problem; on CUDA through a Dispatcher prepared for the point
    before the worker captures the launch in a graph (the op allocates nothing then)."""
    dispatcher = _dispatcher(problem) if problem.q.is_cuda else None
    scale = problem.softmax_scale if softmax_scale is None else softmax_scale

    def launcher():
        mlalab.mla_decode(problem.q, problem.kv_cache, problem.block_table, problem.seq_lens,
                          scale, sinks=problem.sinks, out=problem.out, lse=problem.lse,
                          dispatcher=dispatcher,
                          max_context=problem.max_context if dispatcher else None)

    if dispatcher is not None:  # what the lab's report lists for this arm at the point
        launcher.resolved_config = dispatcher.resolution(problem.q.shape[0], problem.max_context)
    return launcher


def labelled(problem, params):
    """The op, its launcher saying what it runs: params["label"] (the worker reports it)."""
    launcher = mlalab_op(problem, params)
    launcher.resolved_config = params["label"]
    return launcher


def wrong_scale(problem, params):
    """The op with its softmax scale off by params["factor"]: must be found INVALID."""
    return mlalab_op(problem, params, softmax_scale=problem.softmax_scale * params["factor"])
