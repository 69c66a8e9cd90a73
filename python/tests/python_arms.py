"""Python arms for the worker's tests (test_worker.py): mlalab's own op (mlalab.arms), one
that says what it runs, and one that is wrong."""
from mlalab import arms


def mlalab_op(problem, params):
    return arms.mla_decode(problem, params)


def labelled(problem, params):
    """The op, its launcher saying what it runs: params["label"] (the worker reports it)."""
    params = dict(params)
    label = params.pop("label")
    launcher = arms.mla_decode(problem, params)
    launcher.resolved_config = label
    return launcher


def wrong_scale(problem, params):
    """The op with its softmax scale off by params["factor"]: must be found INVALID."""
    params = dict(params)
    factor = params.pop("factor")
    return arms.mla_decode(problem, params, softmax_scale=problem.softmax_scale * factor)
