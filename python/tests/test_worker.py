"""`python -m mlalab.worker`, driven over its pipes as the lab drives `mlalab worker`
(src/ab/worker.h): the protocol, the reference check of Python arms, samples, code hashes."""
import json
import os
import pathlib
import subprocess
import sys

import pytest
import torch

TESTS = pathlib.Path(__file__).parent
WORKLOAD = {"layout": "v3", "heads": 16, "page_size": 64, "context_lengths": [1, 100, 300],
            "seed": 3, "launches_per_sample": 5}


class Worker:
    def __init__(self, backend: str):
        path = os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mlalab.worker", "--backend", backend],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env={**os.environ, "PYTHONPATH": path})

    def ask(self, **request) -> dict:
        self.process.stdin.write(json.dumps(request) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        assert line, f"the worker ended: {self.process.stderr.read()[-3000:]}"
        return json.loads(line)

    def close(self) -> int:
        self.process.stdin.close()
        return self.process.wait(timeout=60)


@pytest.fixture
def cpu_worker():
    worker = Worker("cpu")
    yield worker
    if worker.process.poll() is None:
        worker.process.kill()


def test_answers_the_protocol_and_checks_arms_against_the_reference(cpu_worker):
    hello = cpu_worker.ask(op="hello")
    assert hello == {"ok": True, "protocol": 1, "commit": "python", "backend": "cpu"}
    early = cpu_worker.ask(op="prepare", arm={"python": "python_arms:mlalab_op"})
    assert not early["ok"] and "prepare before begin_point" in early["error"]
    assert cpu_worker.ask(op="begin_point", workload=WORKLOAD) == {"ok": True}

    good = cpu_worker.ask(op="prepare", arm={"python": "python_arms:mlalab_op", "params": {}})
    assert good["ok"] and good["arm"] == 0, good
    wrong = cpu_worker.ask(op="prepare",
                           arm={"python": "python_arms:wrong_scale", "params": {"factor": 1.1}})
    assert wrong["ok"] and wrong["arm"] is None
    assert "differs from the reference" in wrong["invalid_reason"], wrong
    for target, why in (("no_such_module:f", "ModuleNotFoundError"),
                        ("python_arms:no_such_function", "has no function 'no_such_function'"),
                        ("python_arms", "expected 'module:function'")):
        reply = cpu_worker.ask(op="prepare", arm={"python": target})
        assert reply["arm"] is None and why in reply["invalid_reason"], reply

    assert cpu_worker.ask(op="warm_up", arm=0) == {"ok": True}
    sample = cpu_worker.ask(op="sample", arm=0)
    assert sample["ok"] and sample["failure"] == "" and sample["time_us"] > 0
    assert sample["value"] == pytest.approx(3 / (sample["time_us"] * 1e-6))
    missing = cpu_worker.ask(op="sample", arm=1)
    assert not missing["ok"] and "no such prepared arm" in missing["error"]
    unknown = cpu_worker.ask(op="launch")
    assert not unknown["ok"] and "unknown op 'launch'" in unknown["error"]
    # A new point drops the previous point's arms.
    assert cpu_worker.ask(op="begin_point", workload={**WORKLOAD, "context_lengths": [64]})["ok"]
    assert not cpu_worker.ask(op="sample", arm=0)["ok"]
    assert cpu_worker.close() == 0


def test_code_hash_follows_the_source_and_the_params(cpu_worker):
    def hashed(params):
        reply = cpu_worker.ask(op="code_hash",
                               arm={"python": "python_arms:wrong_scale", "params": params})
        assert reply["ok"], reply
        return reply["code_hash"]

    assert len(hashed({"factor": 1.1})) == 64
    assert hashed({"factor": 1.1}) == hashed({"factor": 1.1})
    assert hashed({"factor": 1.1}) != hashed({"factor": 1.2})


def test_refuses_cuda_without_a_device():
    if torch.cuda.is_available():
        pytest.skip("this machine has a CUDA device")
    result = subprocess.run([sys.executable, "-m", "mlalab.worker", "--backend", "cuda"],
                            input="", capture_output=True, text=True, timeout=120)
    assert result.returncode == 2 and "no CUDA device" in result.stderr


@pytest.mark.skipif(not torch.cuda.is_available(),
                    reason="no CUDA device (torch.cuda.is_available() is False): the CUDA "
                           "worker times CUDA-graph replays on a GPU machine")
def test_times_the_triton_kernel_and_mlalab_on_cuda():
    pytest.importorskip("triton")
    worker = Worker("cuda")
    try:
        assert worker.ask(op="hello")["backend"] == "cuda"
        assert worker.ask(op="begin_point", workload={**WORKLOAD, "layout": "v4"})["ok"]
        arms = [{"python": "python_arms:mlalab_op"},
                {"python": "mlalab.triton_decode:arm", "params": {"block_n": 16}}]
        for index, arm in enumerate(arms):
            prepared = worker.ask(op="prepare", arm=arm)
            assert prepared["arm"] == index, prepared
            assert worker.ask(op="warm_up", arm=index)["ok"]
            sample = worker.ask(op="sample", arm=index)
            assert sample["ok"] and 0 < sample["time_us"] < 1e4, sample
        assert worker.close() == 0
    finally:
        if worker.process.poll() is None:
            worker.process.kill()
