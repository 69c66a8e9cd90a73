"""`python -m mlalab.worker --backend cuda|cpu`: Python arms for the A/B lab (issue 11, part 2).

The Python end of the lab's worker protocol (src/ab/worker.h: one JSON request per line on
stdin, one JSON reply per line on stdout, every reply with "ok", and "error" when it is
false). An arm here is a Python callable: A = {"python": "module:function", "params": {...}}.
At each sweep point the worker builds the point's problem (mlalab.problems, from the workload's
layout, heads, page size, lengths and seed), and for each arm calls

    launcher = function(problem, params)

with `problem` an mlalab.problems.Problem (q, kv_cache, block_table, seq_lens, softmax_scale,
sinks) with the output buffers `out` and `lse`, its `layout` and `max_context`; the launcher
runs the kernel once on the current stream; it may carry `resolved_config`, a line saying what
it launches at this point (the report lists it per point, as for tuned arms). The function is
called again for each copy of the inputs made for timing (below); the launchers run one after
another, never at once, so they may share a workspace, as an engine's layers do (a workspace
per copy sends each call's partial results to HBM: 2-4 % slower on the H200). The problem is
the one the lab's kernel arms get at the point (torch.ops.mlalab.lab_problem: the same spec and
seed, so the same data, NaN cache rows past each sequence's end and page-table entries past its
last page included), and the arm is checked as they are (torch.ops.mlalab.lab_check: poisoned
outputs, the fp64 reference on up to 8 sequences; an arm that fails or raises is INVALID).
Then:
  cuda  the arm's launches on copies of the inputs spanning 4× the L2 cache, at least 2 (so
        that the KV cache comes from HBM, as for the kernel arms), are captured in one CUDA
        graph, replayed on a stream of its own; a sample is the median over
        launches_per_sample replays of replay time / copies;
  cpu   a sample is the median of launches_per_sample calls, timed with perf_counter.
The sample's value is batch / time (sequences per second), as for kernel arms. The code hash
of an arm covers its module's source, its params and the torch and Triton versions (and
whatever the module's `__mlalab_code_identity__(params)` adds, e.g. mlalab.arms the SASS hashes
of mlalab's kernels); it is known before anything compiles, so `mlalab verify` can check it.
Once an arm has run, its binary hash covers the code of the Triton kernels it launched (their
cubins' .text sections, seen through Triton's launch hook during its reference check, at every
point so far; "" when there are none: no Triton kernel, the CPU's interpreter, or a Triton
without launch hooks).

`mlalab ab` starts this worker (with $MLALAB_PYTHON, else python3 on PATH) for the arms of an
experiment file that name `python = "module:function"` (docs/experiments.md).
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import importlib
import inspect
import json
import math
import statistics
import struct
import sys
import time
import traceback
from typing import Callable, Optional

import torch

import mlalab  # noqa: F401  (loads torch.ops.mlalab)
from mlalab.problems import D_V, Problem

PROTOCOL = 1
# As the lab's kernel arms (bench/device_problem.h): copies of the inputs spanning 4× L2, and
# at least 2, so that no call finds its KV cache in L2 from the call before.
L2_COPIES_FACTOR = 4
MIN_COPIES = 2


@dataclasses.dataclass
class Workload:
    layout: str
    heads: int
    page_size: int
    context_lengths: list
    seed: int
    launches_per_sample: int
    # The lab's instances per CUDA kernel arm; a Python arm is its launcher's own: unused.
    instances_per_arm: int = 1


@dataclasses.dataclass
class PointProblem(Problem):
    """A sweep point's problem as an arm sees it: the inputs and the output buffers."""

    out: Optional[torch.Tensor] = None
    lse: Optional[torch.Tensor] = None
    layout: str = "v3"
    max_context: int = 0


def resolve(target: str) -> Callable:
    """`module:function` → the function, or ValueError saying what is wrong."""
    module_name, _, function_name = target.partition(":")
    if not module_name or not function_name:
        raise ValueError(f"python = {target!r}: expected 'module:function'")
    module = importlib.import_module(module_name)
    function = getattr(module, function_name, None)
    if not callable(function):
        raise ValueError(f"python = {target!r}: {module_name} has no function {function_name!r}")
    return function


def code_hash(target: str, params: dict) -> str:
    """SHA-256 of what makes the arm's machine code: its module's source, its params, and the
    versions of torch and Triton that compile it. (The lab asks before anything is compiled,
    so compiled binaries cannot be part of it.)"""
    function = resolve(target)
    module = sys.modules[function.__module__]
    digest = hashlib.sha256()
    digest.update(inspect.getsource(module).encode())
    digest.update(json.dumps(params, sort_keys=True).encode())
    identity = getattr(module, "__mlalab_code_identity__", None)
    if callable(identity):  # code the source does not show: a compiled library's, a table's
        digest.update(str(identity(params)).encode())
    digest.update(f"torch {torch.__version__}".encode())
    try:
        import triton
        digest.update(f"triton {triton.__version__}".encode())
    except ImportError:
        pass
    return digest.hexdigest()


@contextlib.contextmanager
def _triton_launches():
    """Collects the handles (CUfunction) of the Triton kernels launched inside the block,
    through Triton's launch hook (triton.knobs.runtime.launch_enter_hook, Triton 3.4 and
    later); an empty set where there is none."""
    launched: set = set()
    try:
        from triton import knobs
        hooks = knobs.runtime.launch_enter_hook
        hooks.add  # a HookChain; older Triton has a single callable here
    except (ImportError, AttributeError):
        yield launched
        return

    def record(metadata) -> None:
        function = getattr(metadata, "data", {}).get("function")
        if function is not None:
            launched.add(function)

    hooks.add(record)
    try:
        yield launched
    finally:
        hooks.remove(record)


def _jit_functions():
    """Every Triton JIT function defined at the top level of a loaded module (through
    autotuner and heuristics wrappers, which hold it as .fn)."""
    try:
        from triton.runtime.jit import JITFunction, KernelInterface
    except ImportError:
        return
    # type(), not isinstance(): an object's __class__ may be a property with side effects.
    for module in list(sys.modules.values()):
        for value in list(getattr(module, "__dict__", {}).values()):
            function = value
            for _ in range(4):
                kind = type(function)
                if not issubclass(kind, KernelInterface) or issubclass(kind, JITFunction):
                    break
                function = getattr(function, "fn", None)
            if issubclass(type(function), JITFunction):
                yield function


def _binaries_of(handles: set) -> list:
    """The binaries (cubins) of the compiled kernels whose handles are `handles`, found in the
    JIT functions' caches (JITFunction.device_caches[device][0] in Triton 3.x)."""
    binaries = {}
    for function in _jit_functions():
        for cache in list(getattr(function, "device_caches", {}).values()):
            kernels = cache[0] if isinstance(cache, tuple) and cache else {}
            for kernel in (list(kernels.values()) if isinstance(kernels, dict) else ()):
                binary = getattr(kernel, "kernel", None)
                handle = getattr(kernel, "function", None)
                if handle in handles and isinstance(binary, (bytes, bytearray)):
                    binaries[handle] = bytes(binary)
    return list(binaries.values())


def code_sections_digest(binary: bytes) -> str:
    """SHA-256 of an ELF binary's code: its .text sections, by name. Triton compiles with line
    info, whose file paths would make the same code hash differently in another install; a
    binary that is not ELF64 is hashed whole."""
    digest = hashlib.sha256()
    try:
        if binary[:5] != b"\x7fELF\x02":
            raise ValueError("not ELF64")
        section_offset, = struct.unpack_from("<Q", binary, 0x28)
        entry_size, count, names_index = struct.unpack_from("<HHH", binary, 0x3A)

        def section(index):
            name, _, _, _, offset, size = struct.unpack_from("<IIQQQQ", binary,
                                                             section_offset + index * entry_size)
            return name, offset, size

        _, names_offset, names_size = section(names_index)
        names = binary[names_offset:names_offset + names_size]
        code = []
        for index in range(count):
            name_at, offset, size = section(index)
            name = names[name_at:names.index(b"\0", name_at)]
            if name.startswith(b".text"):
                code.append((name, binary[offset:offset + size]))
        if not code:
            raise ValueError("no .text section")
        for name, content in sorted(code):
            digest.update(name + b"\0" + hashlib.sha256(content).digest())
    except (ValueError, struct.error):
        digest = hashlib.sha256(binary)
    return digest.hexdigest()


class PreparedArm:
    """One arm at one point: its launcher(s), and how a sample is taken."""

    def __init__(self, launchers: list, batch: int, launches: int, device: torch.device):
        self.batch = batch
        self.launches = launches
        self.device = device
        self.copies = len(launchers)
        # The graph replays what the launchers captured: their buffers (a workspace, a
        # dispatcher's) must live as long as it. Freed, the next arm's capture (torch empties
        # its cache first) would return them to the driver, and a replay would fault.
        self.launchers = launchers
        if device.type == "cuda":
            self.graph = torch.cuda.CUDAGraph()
            # Replayed on a stream of its own, as the kernel arms are (not the legacy default
            # stream, which synchronizes with every other).
            self.stream = torch.cuda.Stream()
            self.stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(self.stream):
                for launcher in launchers:  # once outside capture: Triton compiles here
                    launcher()
            torch.cuda.synchronize()
            with torch.cuda.graph(self.graph):
                for launcher in launchers:
                    launcher()
            torch.cuda.synchronize()

    def warm_up(self) -> None:
        for _ in range(3):
            self._call_us()

    def sample(self) -> dict:
        times = [self._call_us() for _ in range(self.launches)]
        time_us = statistics.median(times)
        return {"ok": True, "value": self.batch / (time_us * 1e-6), "time_us": time_us,
                "failure": ""}

    def _call_us(self) -> float:
        if self.device.type != "cuda":
            start = time.perf_counter()
            self.launchers[0]()
            return (time.perf_counter() - start) * 1e6
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with torch.cuda.stream(self.stream):
            begin.record()
            self.graph.replay()
            end.record()
        end.synchronize()
        return begin.elapsed_time(end) * 1e3 / self.copies


class Worker:
    def __init__(self, backend: str):
        if backend == "cuda" and not torch.cuda.is_available():
            raise RuntimeError("--backend cuda: no CUDA device (torch.cuda.is_available() is "
                               "False)")
        self.backend = backend
        self.device = torch.device("cuda" if backend == "cuda" else "cpu")
        self.workload: Optional[Workload] = None
        self.copies: list = []  # the point's problem, then copies of it for timing
        self.arms: list = []
        # The code digests of the Triton kernels each arm (its target and params) launched, over
        # the run.
        self.binaries: dict = {}

    def answer(self, request: dict) -> dict:
        op = request.get("op")
        if op == "hello":
            return {"ok": True, "protocol": PROTOCOL, "commit": "python", "backend": self.backend}
        if op == "begin_point":
            self.arms.clear()
            self.copies.clear()
            self.workload = None
            workload = Workload(**request["workload"])
            self.copies.append(self.point_problem(workload))
            self.workload = workload
            return {"ok": True}
        if op == "code_hash":
            arm = request["arm"]
            return {"ok": True, "code_hash": code_hash(arm["python"], arm.get("params", {}))}
        if op == "prepare":
            if self.workload is None:
                raise ValueError("prepare before begin_point")
            return self.prepare(request["arm"])
        if op not in ("warm_up", "sample"):
            raise ValueError(f"unknown op '{op}'")
        index = request["arm"]
        if not isinstance(index, int) or not 0 <= index < len(self.arms):
            raise ValueError("no such prepared arm")
        if op == "warm_up":
            self.arms[index].warm_up()
            return {"ok": True}
        return self.arms[index].sample()

    def point_problem(self, w: Workload) -> PointProblem:
        q, kv_cache, block_table, seq_lens, scale = torch.ops.mlalab.lab_problem(
            w.layout, w.heads, w.page_size, w.context_lengths, w.seed)
        batch, heads, _ = q.shape
        return PointProblem(
            q=q, kv_cache=kv_cache, block_table=block_table, seq_lens=seq_lens,
            softmax_scale=scale, sinks=None,
            out=torch.empty(batch, heads, D_V, dtype=torch.bfloat16),
            lse=torch.empty(batch, heads, dtype=torch.float32), layout=w.layout,
            max_context=max(w.context_lengths, default=0)).to(self.device)

    def timing_copies(self) -> list:
        """The point's problem and enough copies of it that together they span 4× L2 (made
        once per point, shared by its arms, as the lab's kernel arms share their replicas)."""
        first = self.copies[0]
        if self.device.type == "cuda" and len(self.copies) == 1:
            kv_bytes = first.kv_cache.numel() * first.kv_cache.element_size()
            l2 = torch.cuda.get_device_properties(self.device).L2_cache_size
            wanted = math.ceil(L2_COPIES_FACTOR * l2 / max(1, kv_bytes))
            for _ in range(1, max(MIN_COPIES, wanted)):
                self.copies.append(dataclasses.replace(
                    first, q=first.q.clone(), kv_cache=first.kv_cache.clone(),
                    out=torch.empty_like(first.out), lse=torch.empty_like(first.lse)))
        return self.copies

    def prepare(self, arm: dict) -> dict:
        identity = json.dumps(arm, sort_keys=True)
        reply = {"ok": True, "splits": 0, "workers": 0, "instances": 0,
                 "resolved_config": ""}
        params = arm.get("params", {})
        w = self.workload
        checked = self.copies[0]
        try:
            function = resolve(arm["python"])
            # Every byte 0xFF, as the lab poisons: the check tells unwritten from computed NaN.
            checked.out.view(torch.int16).fill_(-1)
            checked.lse.view(torch.int32).fill_(-1)
            launcher = function(checked, params)
            with _triton_launches() as launched:
                launcher()
            if self.device.type == "cuda":
                torch.cuda.synchronize()
            failure = torch.ops.mlalab.lab_check(w.layout, w.heads, w.page_size,
                                                 w.context_lengths, w.seed, checked.out,
                                                 checked.lse)
        except Exception as error:  # the arm's failure, reported, not the worker's
            return {**reply, "arm": None,
                    "invalid_reason": f"{type(error).__name__}: {error}".strip()}
        if failure:
            return {**reply, "arm": None, "invalid_reason": failure}
        try:
            launchers = [launcher] + [function(copy, params)
                                      for copy in self.timing_copies()[1:]]
            prepared = PreparedArm(launchers, len(w.context_lengths), w.launches_per_sample,
                                   self.device)
        except Exception as error:  # e.g. a launcher that allocates cannot be captured
            return {**reply, "arm": None,
                    "invalid_reason": f"cannot be timed in a CUDA graph: "
                                      f"{type(error).__name__}: {error}".strip()}
        self.arms.append(prepared)
        # What the arm resolved to here, if its launcher says (as the lab reports tuned arms).
        reply["resolved_config"] = str(getattr(launcher, "resolved_config", "") or "")
        try:
            binary_hash = self.binary_hash(identity, _binaries_of(launched))
        except Exception as error:  # "where available": not a reason to refuse the arm
            print(f"mlalab.worker: no binary hash for {arm['python']}: {error}", file=sys.stderr)
            binary_hash = ""
        return {**reply, "arm": len(self.arms) - 1, "binary_hash": binary_hash}

    def binary_hash(self, identity: str, binaries: list) -> str:
        """Adds the code of the Triton kernels the arm launched at this point to the arm's (a
        point may specialise them anew), and hashes all of it ("" when there is none)."""
        digests = self.binaries.setdefault(identity, set())
        digests.update(code_sections_digest(binary) for binary in binaries)
        return hashlib.sha256("".join(sorted(digests)).encode()).hexdigest() if digests else ""


def serve(worker: Worker, requests, replies) -> None:
    """Answers each line of `requests` on `replies` until the input ends; a request that fails
    gets {"ok": false, "error": ...} and the worker goes on."""
    for line in requests:
        if not line.strip():
            continue
        try:
            reply = worker.answer(json.loads(line))
        except Exception as error:
            reply = {"ok": False, "error": f"{type(error).__name__}: {error}"}
            traceback.print_exc(file=sys.stderr)
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mlalab.worker",
        description="Answer the A/B lab's worker requests (src/ab/worker.h) for Python arms "
                    "({\"python\": \"module:function\", \"params\": {...}}), one JSON line per "
                    "request on stdin, one reply per line on stdout.")
    parser.add_argument("--backend", choices=("cuda", "cpu"), required=True,
                        help="where the arms' tensors live: cuda (timed by CUDA-graph replays) "
                             "or cpu (timed calls)")
    args = parser.parse_args(argv)
    try:
        worker = Worker(args.backend)
    except RuntimeError as error:
        print(f"mlalab.worker: {error}", file=sys.stderr)
        return 2
    serve(worker, sys.stdin, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
