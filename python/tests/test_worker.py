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
    assert good["ok"] and good["arm"] == 0 and good["resolved_config"] == "", good
    labelled = cpu_worker.ask(op="prepare", arm={"python": "python_arms:labelled",
                                                 "params": {"label": "the op, 1 split"}})
    assert labelled["arm"] == 1 and labelled["resolved_config"] == "the op, 1 split", labelled
    shared = cpu_worker.ask(op="prepare", arm={"python": "python_arms:shared_outputs"})
    assert shared["ok"] and shared["arm"] == 2, shared  # its outputs are the checked ones
    wrong = cpu_worker.ask(op="prepare",
                           arm={"python": "python_arms:wrong_scale", "params": {"factor": 1.1}})
    assert wrong["ok"] and wrong["arm"] is None
    assert "but reference" in wrong["invalid_reason"], wrong  # the lab's check
    bogus = cpu_worker.ask(op="prepare", arm={"python": "mlalab.arms:mla_decode",
                                              "params": {"warps": 8}})
    assert bogus["arm"] is None and "takes split and tuning only" in bogus["invalid_reason"]
    for target, why in (("no_such_module:f", "ModuleNotFoundError"),
                        ("python_arms:no_such_function", "has no function 'no_such_function'"),
                        ("python_arms", "expected 'module:function'")):
        reply = cpu_worker.ask(op="prepare", arm={"python": target})
        assert reply["arm"] is None and why in reply["invalid_reason"], reply

    assert cpu_worker.ask(op="warm_up", arm=0) == {"ok": True}
    sample = cpu_worker.ask(op="sample", arm=0)
    assert sample["ok"] and sample["failure"] == "" and sample["time_us"] > 0
    assert sample["value"] == pytest.approx(3 / (sample["time_us"] * 1e-6))
    missing = cpu_worker.ask(op="sample", arm=3)
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


def test_the_op_arms_code_hash_covers_mlalabs_kernels_and_the_table(tmp_path):
    from mlalab import arms, configs, worker

    identity = arms.__mlalab_code_identity__({})
    for config in configs():
        assert f"{config.name}:{config.code_hash}" in identity
    table = tmp_path / "tuning.json"
    table.write_text('{"entries": []}')
    before = worker.code_hash("mlalab.arms:mla_decode", {"tuning": str(table)})
    table.write_text('{"entries": [1]}')  # re-tuned: the same path, other contents
    assert worker.code_hash("mlalab.arms:mla_decode", {"tuning": str(table)}) != before


def _elf(sections: dict) -> bytes:
    """A minimal ELF64 file with the named sections (and the section-name table)."""
    import struct
    names = b"\0" + b"".join(name + b"\0" for name in sections) + b".shstrtab\0"
    body, offsets = b"", {}
    for name, content in [*sections.items(), (b".shstrtab", names)]:
        offsets[name] = 64 + len(body)
        body += content
    section_offset = 64 + len(body)
    headers = b"\0" * 64  # the null section
    contents = {**sections, b".shstrtab": names}
    for name, content in contents.items():
        headers += struct.pack("<IIQQQQIIQQ", names.index(name + b"\0"), 1, 0, 0,
                               offsets[name], len(content), 0, 0, 1, 0)
    header = bytearray(b"\x7fELF\x02\x01\x01" + b"\0" * 57)
    struct.pack_into("<Q", header, 0x28, section_offset)
    struct.pack_into("<HHH", header, 0x3A, 64, len(contents) + 1, len(contents))
    return bytes(header) + body + headers


def test_binary_hash_covers_the_code_of_the_triton_kernels_an_arm_launched():
    triton = pytest.importorskip("triton")
    import hashlib
    import types

    from mlalab import worker as worker_module

    # The code, not the line info (which names the install's paths): .text sections only.
    digest = worker_module.code_sections_digest
    code = {b".text.kernel": b"\x01\x02", b".nv.info": b"x", b".debug_line": b"/site/a.py"}
    assert digest(_elf(code)) == digest(_elf({**code, b".debug_line": b"/checkout/a.py"}))
    assert digest(_elf(code)) != digest(_elf({**code, b".text.kernel": b"\x01\x03"}))
    assert digest(b"not elf") == hashlib.sha256(b"not elf").hexdigest()

    # What an arm launched, as Triton's launch hook reports it (called here by hand, as a
    # launch would), found in the JIT functions' caches by handle.
    if not hasattr(getattr(triton, "knobs", None), "runtime"):
        pytest.skip(f"Triton {triton.__version__} has no launch hooks (triton.knobs)")
    from triton.compiler.compiler import LazyDict

    @triton.jit
    def kernel(x):
        pass

    class Compiled:
        def __init__(self, handle: int, binary: bytes):
            self.function, self.kernel = handle, binary

    production, eight_warps = _elf({b".text.a": b"1"}), _elf({b".text.a": b"2"})
    kernel.device_caches[0] = ({"key 1": Compiled(11, production),
                                "key 2": Compiled(12, eight_warps)}, {}, None, None, None)
    module = types.ModuleType("launched_arms")
    module.kernel = triton.heuristics({"unused": lambda args: 1})(kernel)
    sys.modules[module.__name__] = module
    try:
        with worker_module._triton_launches() as launched:
            triton.knobs.runtime.launch_enter_hook(LazyDict({"name": "kernel", "function": 12}))
        assert launched == {12}
        assert worker_module._binaries_of(launched) == [eight_warps]
        triton.knobs.runtime.launch_enter_hook(LazyDict({"name": "kernel", "function": 11}))
        assert launched == {12}  # the hook is gone after the block
    finally:
        del sys.modules[module.__name__]

    # An arm's hash covers what it launched at every point so far, whatever other arms did.
    worker = worker_module.Worker("cpu")

    def hashed(*binaries):
        return hashlib.sha256("".join(sorted(digest(b) for b in binaries)).encode()).hexdigest()

    assert worker.binary_hash("arm A", [production]) == hashed(production)
    assert worker.binary_hash("arm B", [production]) == hashed(production)
    assert worker.binary_hash("arm B", [eight_warps]) == hashed(production, eight_warps)
    assert worker.binary_hash("arm A", []) == hashed(production)
    assert worker.binary_hash("arm C", []) == ""


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
    # The 32-token tile first: the 16-token one needs a larger workspace (more splits), which
    # replaces the shared one while the first arm's graph still holds the old.
    arms = [{"python": "python_arms:mlalab_op"},
            {"python": "mlalab.triton_decode:arm", "params": {"block_n": 32}},
            {"python": "mlalab.triton_decode:arm", "params": {"block_n": 16}}]
    hashes = {}
    try:
        assert worker.ask(op="hello")["backend"] == "cuda"
        for lengths in ([1, 100, 300], [64, 2000]):  # two points: new shapes, new graphs
            workload = {**WORKLOAD, "layout": "v4", "context_lengths": lengths}
            assert worker.ask(op="begin_point", workload=workload)["ok"]
            # Every arm prepared before any is timed, as the lab does: each capture must leave
            # the graphs captured before it replayable.
            for index, arm in enumerate(arms):
                prepared = worker.ask(op="prepare", arm=arm)
                assert prepared["arm"] == index, prepared
                # The Triton arms launched their two kernels; mlalab's op is no Triton code.
                triton_arm = "triton" in arm["python"]
                assert len(prepared["binary_hash"]) == (64 if triton_arm else 0), prepared
                assert "split" in prepared["resolved_config"], prepared  # each says its grid
                hashes.setdefault(index, set()).add(prepared["binary_hash"])
            for index in range(len(arms)):
                warmed = worker.ask(op="warm_up", arm=index)
                assert warmed["ok"], warmed
                sample = worker.ask(op="sample", arm=index)
                assert sample["ok"] and 0 < sample["time_us"] < 1e4, sample
        assert worker.close() == 0
    finally:
        if worker.process.poll() is None:
            worker.process.kill()
    assert hashes[1].isdisjoint(hashes[2])  # other tiles, other binaries


def _mlalab_binary():
    """The mlalab binary of this checkout's build (scripts/build.sh), or $MLALAB_BINARY."""
    given = os.environ.get("MLALAB_BINARY")
    path = pathlib.Path(given) if given else TESTS.parents[1] / "build" / "bin" / "mlalab"
    return path if path.is_file() and os.access(path, os.X_OK) else None


EXPERIMENT = """
name = "python-arm"
hypothesis = "a Python arm calling mlalab's CPU op times like the CPU kernel arm (0 %)"
backend = "cpu"

[sweep]
layout = "v3"
heads = 16
page_size = 64
concurrency = [1, 2]
context = 256

[measure]
launches_per_sample = 3
max_minutes = 2
throttle_fraction = 0

[decision]
min_effect_pct = 50.0
min_rounds = 4
max_rounds = 4
time_budget_s = 60

[baseline]
variant = "cpu"
threads = 1

[[variant]]
name = "python op"
python = "python_arms:mlalab_op"

[[variant]]
name = "labelled op"
python = "python_arms:labelled"
params = { label = "the op, one split" }

[[variant]]
name = "wrong scale"
python = "python_arms:wrong_scale"
params = { factor = 1.1 }
"""


@pytest.mark.skipif(_mlalab_binary() is None,
                    reason="no mlalab binary at build/bin/mlalab (bash scripts/build.sh builds "
                           "it; or set MLALAB_BINARY)")
def test_the_lab_runs_python_arms_beside_a_kernel_arm(tmp_path):
    experiment = tmp_path / "python-arm.toml"
    experiment.write_text(EXPERIMENT)
    path = os.pathsep.join(filter(None, [str(TESTS), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "MLALAB_PYTHON": sys.executable, "PYTHONPATH": path}
    binary = str(_mlalab_binary())
    run = subprocess.run([binary, "ab", str(experiment), "--out", str(tmp_path / "out")],
                         env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 3, run.stdout + run.stderr  # 3: an arm is INVALID
    (folder,) = (tmp_path / "out").glob("python-arm-*")
    results = json.loads((folder / "results.json").read_text())
    arms = {arm["name"]: (index, arm) for index, arm in enumerate(results["arms"])}
    index, python_op = arms["python op"]
    assert python_op["valid"] and python_op["config"]["python"] == "python_arms:mlalab_op"
    assert python_op["config_text"] == "python python_arms:mlalab_op {}"
    values = [s["value"] for s in results["samples"] if s["arm"] == index]
    assert len(values) == 8 and all(value > 0 for value in values)  # 4 rounds at 2 points
    # What a Python arm's launcher says it runs is listed per point, as for tuned arms.
    labelled, _ = arms["labelled op"]
    for point in results["points"]:
        assert point["resolved_configs"][labelled] == "the op, one split"
    assert "'labelled op' (Python) ran the op, one split" in (folder / "report.md").read_text()
    _, wrong = arms["wrong scale"]
    assert not wrong["valid"] and "but reference" in wrong["invalid_reason"]
    assert wrong["config"]["params"] == {"factor": 1.1}
    verify = subprocess.run([binary, "verify", str(folder / "fingerprint.json"), "--experiment",
                             str(experiment)], env=env, capture_output=True, text=True,
                            timeout=300)
    assert verify.returncode == 0 and "verified" in verify.stdout, verify.stdout + verify.stderr


def test_the_lab_problem_is_seeded_and_booby_trapped():
    import mlalab  # noqa: F401  (torch.ops.mlalab)
    first = torch.ops.mlalab.lab_problem("v3", 16, 64, [1, 100], 3)
    again = torch.ops.mlalab.lab_problem("v3", 16, 64, [1, 100], 3)
    q, kv_cache, block_table, seq_lens, scale = first
    assert q.shape == (2, 16, 576) and q.dtype == torch.bfloat16
    assert kv_cache.shape[1:] == (64, 576) and seq_lens.tolist() == [1, 100]
    bits = lambda t: t.view(torch.int16) if t.dtype == torch.bfloat16 else t  # noqa: E731
    assert all(torch.equal(bits(a), bits(b)) for a, b in zip(first[:4], again[:4]))
    assert scale == again[4]
    # Past a sequence's end its cache rows are NaN and its page-table entries leave the cache.
    assert torch.isnan(kv_cache[block_table[0, 0], 1:].float()).all()
    assert not torch.isnan(kv_cache[block_table[0, 0], 0].float()).any()
    past_end = block_table[0, 1:]
    assert ((past_end < 0) | (past_end >= kv_cache.shape[0])).all()
    with pytest.raises(ValueError, match="heads = 0: allowed"):
        torch.ops.mlalab.lab_problem("v3", 0, 64, [1], 3)
