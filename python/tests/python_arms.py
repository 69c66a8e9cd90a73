"""Python arms for the worker's tests (test_worker.py): mlalab's own op (mlalab.arms), one
that says what it runs, one that is wrong, and one whose copies share their outputs."""
import dataclasses

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


# The outputs shared by shared_outputs's launchers: (the point's block table, out, lse).
_shared_outputs: tuple = (None, None, None)


def shared_outputs(problem, params):
    """The op, every input copy of a point writing the outputs of the first problem it is
    called with there (the checked one): as the lab's kernel arms share one out and lse across
    their input copies, where the worker gives each copy its own. Beside `mlalab_op` against a
    kernel arm it asks whether per-copy outputs are the Python path's unexplained offset
    (docs/results/2026-12-01-h200-triton-lab/: 1.4-2.3 % at C8-C128). The copies of a point
    share its block table, which tells the points apart."""
    global _shared_outputs
    if _shared_outputs[0] is not problem.block_table:
        _shared_outputs = (problem.block_table, problem.out, problem.lse)
    _, out, lse = _shared_outputs
    return arms.mla_decode(dataclasses.replace(problem, out=out, lse=lse), params)
