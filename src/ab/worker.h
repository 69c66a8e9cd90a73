#pragma once
// Worker arms: kernel arms of another mlalab build (KernelArm::build), timed at kernel-level
// noise rather than a whole process per sample. The other build runs `mlalab worker --backend
// B`, a long-lived process that answers requests on its stdin with one JSON line each on its
// stdout; the lab drives it through a KernelBackend (make_worker_backend), so that its arms
// are built on the same problem (the same seed), checked against that build's fp64 reference,
// prepared and sampled exactly as this build's arms are, interleaved in the same rounds.
//
// The protocol, one JSON object per line; every reply has "ok", and "error" when it is false:
//   {"op":"hello"}                      → {"ok":true,"protocol":1,"commit":"…","backend":"cpu"}
//   {"op":"begin_point","workload":W}   → {"ok":true}    (the previous point's arms are dropped)
//   {"op":"prepare","arm":A}            → {"ok":true,"arm":N,"splits":…,"workers":…,
//                                          "instances":…,
//                                          "resolved_config":"…"}, or "arm":null and
//                                          "invalid_reason" when the arm fails here
//   {"op":"code_hash","arm":A}          → {"ok":true,"code_hash":"…"}
//   {"op":"warm_up","arm":N}            → {"ok":true}
//   {"op":"sample","arm":N}             → {"ok":true,"value":x or null,"time_us":t,"failure":"…"}
// W: {"layout","heads","page_size","context_lengths","seed","launches_per_sample",
// "instances_per_arm"} (PointWorkload; a worker of an older build ignores instances_per_arm
// and omits "instances" from its replies, which the lab notes);
// A: {"variant","split","table","cpu_threads"} (KernelArm without its build). The end of the
// input ends the worker. python/mlalab/worker.py answers the same requests for Python arms
// (A: {"python": "module:function", "params": {...}}), its prepare replies with a
// "binary_hash" too (Preparation::binary_hash; optional in the protocol).
#include <atomic>
#include <iosfwd>
#include <memory>
#include <string>

#include "ab/arms.h"
#include "core/backend.h"

namespace mlalab::ab {

inline constexpr int kWorkerProtocol = 1;

// Answers the requests of `in` on `out` with `backend`'s kernels until `in` ends. A request it
// cannot parse gets {"ok":false,"error":…}; the worker goes on.
void serve_worker(KernelBackend& backend, std::istream& in, std::ostream& out);

// A KernelBackend whose kernels run in `mlalab worker --backend B` of the build at
// `build_path`, started now. Throws std::runtime_error when the worker cannot be started or
// does not answer hello on `backend`. A sample running when *stop_signal is raised or its
// deadline passes is cut, and the worker is killed (the arms of that build are then invalid).
std::unique_ptr<KernelBackend> make_worker_backend(const std::string& build_path, Backend backend,
                                                   const std::atomic<int>* stop_signal);

// The interpreter of the Python worker: $MLALAB_PYTHON, or python3 on PATH.
inline constexpr const char* kPythonEnvVar = "MLALAB_PYTHON";

// A KernelBackend whose arms are Python arms (KernelArm::python), run by
// `python -m mlalab.worker --backend B` (python/mlalab/worker.py), started now; it needs the
// mlalab package importable by that Python. Throws as make_worker_backend.
std::unique_ptr<KernelBackend> make_python_worker_backend(Backend backend,
                                                          const std::atomic<int>* stop_signal);

}  // namespace mlalab::ab
