// The PyTorch binding: mlalab's decode kernels, the graph-safe dispatcher and the variant table
// as ops of the `mlalab` library (TORCH_LIBRARY), so that CUDA-graph capture and torch.compile
// see real ops. python/mlalab/ wraps them in the package's API.
//
//   torch.ops.mlalab.mla_decode(q, kv_cache, block_table, seq_lens, softmax_scale, sinks,
//                               out, lse, max_context, dispatcher)          writes out, lse
//   torch.ops.mlalab.dispatcher_new(layout, heads, page_size, table, split) -> handle
//   torch.ops.mlalab.dispatcher_prepare(handle, batches, max_contexts)      -> workspace bytes
//   torch.ops.mlalab.dispatcher_resolution(handle, batch, max_context)      -> text
//   torch.ops.mlalab.dispatcher_free(handle)
//   torch.ops.mlalab.configs(layout, smem_limit)                            -> JSON text
//   torch.ops.mlalab.lab_problem(layout, heads, page_size, lengths, seed)
//       -> (q, kv_cache, block_table, seq_lens, softmax_scale): the A/B lab's problem
//   torch.ops.mlalab.lab_check(layout, heads, page_size, lengths, seed, out, lse) -> text
//       the lab's check of outputs of that problem against its fp64 reference ("" = pass)
//
// CPU tensors run on the CPU backend, CUDA tensors through a Dispatcher on the current stream:
// the caller's (handle > 0), or the default one of the call's (layout, heads, page size), which
// prepares each key the first time it meets it outside a capture. A dispatcher's calls are
// serialised (a lock) and share its one workspace, so its launches belong on one stream; one
// CUDA device per process. Bad input raises ValueError with the library's message (the field,
// its value, the allowed range) before any launch: shapes, dtypes and strides on every call,
// the contents of seq_lens and the block table on the CPU backend only (reading them on the
// device would synchronise).
#include <ATen/ATen.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <torch/library.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "bench/check.h"
#include "bench/problem.h"
#include "core/decode_params.h"
#include "core/kernel_config.h"
#include "core/layout.h"
#include "core/validate.h"
#include "dispatch/dispatcher.h"
#include "dispatch/feasibility.h"
#include "dispatch/tuning_table.h"
#include "kernels/cpu/cpu_backend.h"
#include "kernels/registry.h"

namespace mlalab::torch_binding {
namespace {

// ---- Tensors → DecodeParams -------------------------------------------------------------

void check_tensor(const at::Tensor& tensor, const char* name, int dims, at::ScalarType dtype,
                  const at::Device& device) {
  TORCH_CHECK_VALUE(tensor.dim() == dims, name, " must have ", dims, " dimensions, got shape ",
                    tensor.sizes());
  TORCH_CHECK_VALUE(tensor.scalar_type() == dtype, name, " must be ", dtype, ", got ",
                    tensor.scalar_type());
  TORCH_CHECK_VALUE(tensor.device() == device, name, " is on ", tensor.device(),
                    " but q is on ", device);
  TORCH_CHECK_VALUE(tensor.size(-1) <= 1 || tensor.stride(-1) == 1, name,
                    " must be contiguous in its last dimension, got strides ", tensor.strides());
}

// The cache as [pages, page_size, d_qk]; [pages, page_size, 1, d_qk] (one latent KV head, as
// the serving engines allocate it) is the same memory.
at::Tensor cache_rows(const at::Tensor& kv_cache) {
  if (kv_cache.dim() == 4) {
    TORCH_CHECK_VALUE(kv_cache.size(2) == 1,
                      "kv_cache of 4 dimensions must be [pages, page_size, 1, d_qk] (one latent "
                      "KV head), got shape ",
                      kv_cache.sizes());
    return kv_cache.select(2, 0);
  }
  return kv_cache;
}

DecodeParams decode_params(const at::Tensor& q, const at::Tensor& kv_cache,
                           const at::Tensor& block_table, const at::Tensor& seq_lens,
                           double softmax_scale, const std::optional<at::Tensor>& sinks,
                           const at::Tensor& out, const at::Tensor& lse) {
  const at::Device device = q.device();
  check_tensor(q, "q [batch, heads, d_qk]", 3, at::kBFloat16, device);
  const at::Tensor cache = cache_rows(kv_cache);
  check_tensor(cache, "kv_cache [pages, page_size, d_qk]", 3, at::kBFloat16, device);
  check_tensor(block_table, "block_table [batch, max_pages]", 2, at::kInt, device);
  check_tensor(seq_lens, "seq_lens [batch]", 1, at::kInt, device);
  check_tensor(out, "out [batch, heads, 512]", 3, at::kBFloat16, device);
  check_tensor(lse, "lse [batch, heads]", 2, at::kFloat, device);
  TORCH_CHECK_VALUE(lse.is_contiguous(), "lse must be contiguous, got strides ", lse.strides());
  const std::int64_t batch = q.size(0);
  const std::int64_t heads = q.size(1);
  TORCH_CHECK_VALUE(block_table.size(0) == batch && seq_lens.size(0) == batch &&
                        out.size(0) == batch && lse.size(0) == batch,
                    "block_table, seq_lens, out and lse must have q's batch (", batch,
                    ") as their first dimension");
  TORCH_CHECK_VALUE(out.size(1) == heads && lse.size(1) == heads,
                    "out and lse must have q's heads (", heads, ") as their second dimension");
  TORCH_CHECK_VALUE(cache.size(2) == q.size(2), "kv_cache rows (", cache.size(2),
                    " wide) must be as wide as q (", q.size(2), ")");
  if (sinks) {
    check_tensor(*sinks, "sinks [heads]", 1, at::kFloat, device);
    TORCH_CHECK_VALUE(sinks->size(0) == heads, "sinks must have one logit per head (", heads,
                      "), got ", sinks->size(0));
  }
  // Sizes past int range are the validator's to refuse; clamp so that it sees them as such.
  const auto as_int = [](std::int64_t value) {
    return static_cast<int>(std::min<std::int64_t>(value, std::numeric_limits<int>::max()));
  };

  DecodeParams params;
  params.q = reinterpret_cast<const bf16*>(q.data_ptr());
  params.kv_cache = reinterpret_cast<const bf16*>(cache.data_ptr());
  params.page_table = block_table.data_ptr<std::int32_t>();
  params.seq_lens = seq_lens.data_ptr<std::int32_t>();
  params.sink_logits = sinks ? sinks->data_ptr<float>() : nullptr;
  params.out = reinterpret_cast<bf16*>(out.data_ptr());
  params.lse = lse.data_ptr<float>();
  params.batch = as_int(batch);
  params.num_heads = as_int(heads);
  params.d_qk = as_int(q.size(2));
  params.d_v = as_int(out.size(2));
  params.page_size = as_int(cache.size(1));
  params.num_pages = as_int(cache.size(0));
  params.max_pages_per_seq = as_int(block_table.size(1));
  params.softmax_scale = static_cast<float>(softmax_scale);
  params.q_batch_stride = q.stride(0);
  params.q_head_stride = q.stride(1);
  params.kv_page_stride = cache.stride(0);
  params.kv_row_stride = cache.stride(1);
  params.page_table_stride = block_table.stride(0);
  params.out_batch_stride = out.stride(0);
  params.out_head_stride = out.stride(1);
  if (const std::optional<InputError> error = validate_shapes(params)) {
    TORCH_CHECK_VALUE(false, error->message());
  }
  return params;
}

Layout layout_of(const DecodeParams& params) {
  return params.d_qk == dims_of(Layout::kV3).d_qk ? Layout::kV3 : Layout::kV4;
}

Layout parse_layout_arg(const std::string& text) {
  const std::optional<Layout> layout = parse_layout(text);
  TORCH_CHECK_VALUE(layout.has_value(), "layout = '", text, "': allowed 'v3' or 'v4'");
  return *layout;
}

// ---- Dispatchers ------------------------------------------------------------------------

// One dispatcher and what guards it: calls may come from several Python threads (the op runs
// without the GIL), and prepare() can grow the workspace a concurrent run() would use.
struct Entry {
  std::unique_ptr<dispatch::Dispatcher> dispatcher;
  std::mutex mutex;
};

// Every Dispatcher the process holds: those Python created (by handle) and the defaults of
// calls without one. Entries are never moved, so a reference stays valid until removed.
class Dispatchers {
 public:
  static Dispatchers& instance() {
    static Dispatchers dispatchers;
    return dispatchers;
  }

  std::int64_t add(std::unique_ptr<dispatch::Dispatcher> dispatcher) {
    const std::lock_guard lock(mutex_);
    const std::int64_t handle = next_handle_++;
    by_handle_[handle] = std::make_unique<Entry>();
    by_handle_[handle]->dispatcher = std::move(dispatcher);
    return handle;
  }

  Entry& get(std::int64_t handle) {
    const std::lock_guard lock(mutex_);
    const auto found = by_handle_.find(handle);
    TORCH_CHECK_VALUE(found != by_handle_.end(), "dispatcher handle ", handle,
                      " does not exist (freed, or not made by mlalab.Dispatcher)");
    return *found->second;
  }

  void remove(std::int64_t handle) {
    const std::lock_guard lock(mutex_);
    by_handle_.erase(handle);
  }

  Entry& default_for(Layout layout, int heads, int page_size) {
    const std::lock_guard lock(mutex_);
    auto& slot = defaults_[{layout, heads, page_size}];
    if (!slot) {
      slot = std::make_unique<Entry>();
      slot->dispatcher = std::make_unique<dispatch::Dispatcher>(layout, heads, page_size);
    }
    return *slot;
  }

 private:
  std::mutex mutex_;
  std::int64_t next_handle_ = 1;
  std::map<std::int64_t, std::unique_ptr<Entry>> by_handle_;
  std::map<std::tuple<Layout, int, int>, std::unique_ptr<Entry>> defaults_;
};

// The kernels' host side describes and configures one device per process (kernels::
// current_device, the shared-memory opt-in of each kernel): the first CUDA device a call
// uses. A call on another is refused rather than launched with the wrong limits.
void check_one_device(const at::Device& device) {
  static std::atomic<int> first_device{-1};
  int expected = -1;
  first_device.compare_exchange_strong(expected, device.index());
  const int used = first_device.load();
  TORCH_CHECK(used == device.index(), "mlalab runs on one CUDA device per process: this one ",
              "first used cuda:", used, ", and this call is on ", device,
              " (start a process per GPU, as serving engines do)");
}

// A (batch, max context) key from Python's integers, refused beyond int range.
dispatch::DispatchKey key_of(std::int64_t batch, std::int64_t max_context) {
  constexpr std::int64_t kIntMax = std::numeric_limits<int>::max();
  TORCH_CHECK_VALUE(batch >= 1 && batch <= kIntMax, "batch = ", batch, ": allowed [1, ", kIntMax,
                    "]");
  TORCH_CHECK_VALUE(max_context >= 1 && max_context <= kIntMax, "max_context = ", max_context,
                    ": allowed [1, ", kIntMax, "]");
  return {.batch = static_cast<int>(batch), .max_context = static_cast<int>(max_context)};
}

std::int64_t dispatcher_new(const std::string& layout, std::int64_t heads, std::int64_t page_size,
                            const std::optional<std::string>& table_path,
                            const std::string& split) {
  std::string split_error;
  const std::optional<SplitPolicy> policy = parse_split_policy(split, &split_error);
  TORCH_CHECK_VALUE(policy.has_value(), "split = '", split, "': ", split_error);
  // The dispatcher checks their ranges; an int holds every value it could accept.
  const auto as_int = [](const char* field, std::int64_t value) {
    TORCH_CHECK_VALUE(value >= std::numeric_limits<int>::min() &&
                          value <= std::numeric_limits<int>::max(),
                      field, " = ", value, ": not an int");
    return static_cast<int>(value);
  };
  const int heads_int = as_int("num_heads", heads);
  const int page_size_int = as_int("page_size", page_size);
  try {
    std::optional<dispatch::TuningTable> table;
    if (table_path) table = dispatch::read_table(*table_path);
    return Dispatchers::instance().add(std::make_unique<dispatch::Dispatcher>(
        parse_layout_arg(layout), heads_int, page_size_int, std::move(table), *policy));
  } catch (const dispatch::TableError& error) {
    TORCH_CHECK_VALUE(false, error.what());
  } catch (const std::invalid_argument& error) {  // heads or page size out of range
    TORCH_CHECK_VALUE(false, error.what());
  } catch (const std::runtime_error& error) {  // no compiled variant can run here
    TORCH_CHECK(false, error.what());
  }
}

std::int64_t dispatcher_prepare(std::int64_t handle, const std::vector<std::int64_t>& batches,
                                const std::vector<std::int64_t>& max_contexts) {
  TORCH_CHECK_VALUE(batches.size() == max_contexts.size(), "batches (", batches.size(),
                    ") and max_contexts (", max_contexts.size(), ") must pair up");
  std::vector<dispatch::DispatchKey> keys;
  for (std::size_t i = 0; i < batches.size(); ++i) keys.push_back(key_of(batches[i], max_contexts[i]));
  Entry& entry = Dispatchers::instance().get(handle);
  TORCH_CHECK(c10::cuda::device_count() > 0,
              "Dispatcher.prepare needs a CUDA device, and none is visible (CPU tensors run on "
              "the CPU backend without a dispatcher)");
  check_one_device(at::Device(at::kCUDA, c10::cuda::current_device()));
  const std::lock_guard lock(entry.mutex);
  try {
    entry.dispatcher->prepare(keys, c10::cuda::getCurrentCUDAStream().stream());
  } catch (const std::invalid_argument& error) {
    TORCH_CHECK_VALUE(false, error.what());
  } catch (const std::exception& error) {  // capturing, or the allocation failed
    TORCH_CHECK(false, error.what());
  }
  return static_cast<std::int64_t>(entry.dispatcher->workspace_bytes());
}

std::string dispatcher_resolution(std::int64_t handle, std::int64_t batch,
                                  std::int64_t max_context) {
  Entry& entry = Dispatchers::instance().get(handle);
  const std::lock_guard lock(entry.mutex);
  const dispatch::ResolvedLaunch* resolved = entry.dispatcher->find(key_of(batch, max_context));
  if (resolved == nullptr) return {};
  const kernels::LaunchPlan& plan = resolved->plan;
  const auto counted = [](int count, const std::string& what) {
    return std::to_string(count) + " " + what + (count == 1 ? "" : "s");
  };
  const std::string grid =
      plan.balanced() ? counted(plan.workers, "worker") : counted(plan.num_splits, "split");
  return variant_name(resolved->config.shape) + " split " + resolved->config.split.to_string() +
         ": " + grid + ", " + std::to_string(plan.ctas) + " CTAs (" + resolved->source + ")";
}

void dispatcher_free(std::int64_t handle) { Dispatchers::instance().remove(handle); }

// ---- The decode op ----------------------------------------------------------------------

void mla_decode_cpu(const at::Tensor& q, const at::Tensor& kv_cache,
                    const at::Tensor& block_table, const at::Tensor& seq_lens,
                    double softmax_scale, const std::optional<at::Tensor>& sinks,
                    const at::Tensor& out, const at::Tensor& lse,
                    std::optional<std::int64_t> max_context, std::int64_t /*dispatcher*/) {
  const DecodeParams params =
      decode_params(q, kv_cache, block_table, seq_lens, softmax_scale, sinks, out, lse);
  if (max_context) key_of(params.batch, *max_context);  // the same range as on CUDA
  if (const std::optional<InputError> error = kernels::run_cpu_backend(params)) {
    TORCH_CHECK_VALUE(false, error->message());
  }
}

void mla_decode_cuda(const at::Tensor& q, const at::Tensor& kv_cache,
                     const at::Tensor& block_table, const at::Tensor& seq_lens,
                     double softmax_scale, const std::optional<at::Tensor>& sinks,
                     const at::Tensor& out, const at::Tensor& lse,
                     std::optional<std::int64_t> max_context, std::int64_t dispatcher_handle) {
  const DecodeParams params =
      decode_params(q, kv_cache, block_table, seq_lens, softmax_scale, sinks, out, lse);
  check_one_device(q.device());
  const c10::cuda::CUDAGuard device_guard(q.device());
  // The key's context: what the block table can hold unless the caller says less. Never the
  // live lengths, which are on the device.
  const dispatch::DispatchKey key =
      key_of(params.batch, max_context.value_or(static_cast<std::int64_t>(
                               params.max_pages_per_seq) * params.page_size));
  const bool own_dispatcher = dispatcher_handle > 0;
  Entry& entry = own_dispatcher ? Dispatchers::instance().get(dispatcher_handle)
                                : Dispatchers::instance().default_for(
                                      layout_of(params), params.num_heads, params.page_size);
  const std::lock_guard lock(entry.mutex);
  dispatch::Dispatcher& dispatcher = *entry.dispatcher;
  TORCH_CHECK_VALUE(dispatcher.layout() == layout_of(params) &&
                        dispatcher.num_heads() == params.num_heads &&
                        dispatcher.page_size() == params.page_size,
                    "the dispatcher serves layout ", name_of(dispatcher.layout()), ", ",
                    dispatcher.num_heads(), " heads, page size ", dispatcher.page_size(),
                    "; this call is layout ", name_of(layout_of(params)), ", ", params.num_heads,
                    " heads, page size ", params.page_size);
  kernels::LaunchStatus status;
  try {
    status = dispatcher.run(params, key.max_context, c10::cuda::getCurrentCUDAStream().stream());
  } catch (const dispatch::UnpreparedKey& error) {
    TORCH_CHECK(false, error.what(),
                own_dispatcher ? " (mlalab.Dispatcher.prepare)"
                               : " (no dispatcher was passed: run the call once outside capture, "
                                 "which prepares the default one, or pass a prepared "
                                 "mlalab.Dispatcher)");
  } catch (const std::invalid_argument& error) {
    TORCH_CHECK_VALUE(false, error.what());
  }
  if (!status.ok()) {
    const dispatch::ResolvedLaunch* resolved = dispatcher.find(key);
    const std::string text =
        resolved != nullptr ? kernels::launch_failure_text(status, params, resolved->config)
                            : std::string(cudaGetErrorString(status.error));
    if (status.refusal == kernels::LaunchRefusal::kInvalidInput) TORCH_CHECK_VALUE(false, text);
    TORCH_CHECK(false, text);
  }
}

// ---- The variant table ------------------------------------------------------------------

std::string configs(const std::string& layout, std::optional<std::int64_t> smem_limit) {
  const int d_qk = dims_of(parse_layout_arg(layout)).d_qk;
  constexpr std::int64_t kMaxLimit = dispatch::kMaxSmemLimitOverrideBytes;
  TORCH_CHECK_VALUE(!smem_limit || (*smem_limit >= 1 && *smem_limit <= kMaxLimit),
                    "smem_limit = ", smem_limit.value_or(0), ": allowed [1, ", kMaxLimit,
                    "] bytes");
  std::optional<int> limit;
  if (smem_limit) limit = static_cast<int>(*smem_limit);
  return dispatch::variant_table_json(dispatch::place_compiled_variants(d_qk, limit)).dump();
}

// ---- The A/B lab's problems, for Python arms (python/mlalab/worker.py) -------------------
// The problem a sweep point's kernel arms get (bench::lab_problem_spec, so the same data,
// booby-traps included: NaN cache rows past each sequence's end, page-table entries past its
// last page outside the cache), and the same check of an arm's outputs.

bench::ProblemSpec lab_spec(const std::string& layout, std::int64_t heads, std::int64_t page_size,
                            const std::vector<std::int64_t>& lengths, std::int64_t seed) {
  TORCH_CHECK_VALUE(heads >= 1 && heads <= kMaxHeads, "heads = ", heads, ": allowed [1, ",
                    kMaxHeads, "]");
  TORCH_CHECK_VALUE(page_size >= 1 && page_size <= (1 << 20), "page_size = ", page_size,
                    ": allowed [1, 2^20]");
  TORCH_CHECK_VALUE(seed >= 0, "seed = ", seed, ": allowed [0, 2^63)");
  std::vector<int> seq_lens;
  for (const std::int64_t length : lengths) {
    TORCH_CHECK_VALUE(length >= 0 && length <= (1 << 20), "lengths: ", length,
                      ": allowed [0, 2^20]");
    seq_lens.push_back(static_cast<int>(length));
  }
  return bench::lab_problem_spec(parse_layout_arg(layout), static_cast<int>(heads),
                                 static_cast<int>(page_size), std::move(seq_lens),
                                 static_cast<std::uint64_t>(seed));
}

at::Tensor bf16_tensor(const std::vector<bf16>& values, std::vector<std::int64_t> shape) {
  at::Tensor tensor = at::empty(shape, at::TensorOptions().dtype(at::kBFloat16));
  std::memcpy(tensor.data_ptr(), values.data(), values.size() * sizeof(bf16));
  return tensor;
}

// The point whose problem was built last, with the fp64 reference of its checked sequences
// once an arm was checked: lab_problem builds it, lab_check of the same point reuses both
// (building a large point's problem takes seconds).
struct LabPoint {
  bench::ProblemSpec spec;
  bench::HostProblem problem;
  std::vector<int> indices;
  std::optional<kernels::ReferenceResult> reference;
};

// The point of `spec`, built unless it is the last one. Call with lab_mutex() held.
LabPoint& lab_point(const bench::ProblemSpec& spec) {
  static std::unique_ptr<LabPoint> last;
  if (!last || last->spec != spec) {
    last.reset();
    last = std::make_unique<LabPoint>(
        LabPoint{.spec = spec,
                 .problem = bench::make_problem(spec),
                 .indices = bench::validation_batch_indices(spec.batch),
                 .reference = std::nullopt});
  }
  return *last;
}

std::mutex& lab_mutex() {
  static std::mutex mutex;
  return mutex;
}

std::tuple<at::Tensor, at::Tensor, at::Tensor, at::Tensor, double> lab_problem(
    const std::string& layout, std::int64_t heads, std::int64_t page_size,
    const std::vector<std::int64_t>& lengths, std::int64_t seed) {
  const std::lock_guard lock(lab_mutex());
  const bench::HostProblem& problem =
      lab_point(lab_spec(layout, heads, page_size, lengths, seed)).problem;
  const std::int64_t batch = problem.spec.batch;
  const std::int64_t d_qk = problem.dims.d_qk;
  at::Tensor block_table = at::empty({batch, problem.max_pages_per_seq}, at::kInt);
  std::memcpy(block_table.data_ptr(), problem.page_table.data(),
              problem.page_table.size() * sizeof(std::int32_t));
  at::Tensor seq_lens = at::empty({batch}, at::kInt);
  std::memcpy(seq_lens.data_ptr(), problem.seq_lens.data(), batch * sizeof(std::int32_t));
  return {bf16_tensor(problem.q, {batch, heads, d_qk}),
          bf16_tensor(problem.kv_cache, {problem.num_pages, page_size, d_qk}), block_table,
          seq_lens, problem.spec.softmax_scale};
}

std::string lab_check(const std::string& layout, std::int64_t heads, std::int64_t page_size,
                      const std::vector<std::int64_t>& lengths, std::int64_t seed,
                      const at::Tensor& out, const at::Tensor& lse) {
  const std::lock_guard lock(lab_mutex());
  const bench::ProblemSpec spec = lab_spec(layout, heads, page_size, lengths, seed);
  LabPoint& point = lab_point(spec);
  if (!point.reference) {
    point.reference = kernels::reference_decode(point.problem.params(), point.indices);
  }
  const std::int64_t batch = spec.batch;
  TORCH_CHECK_VALUE(out.sizes() == at::IntArrayRef({batch, heads, kDv}) &&
                        out.scalar_type() == at::kBFloat16,
                    "out must be bfloat16 [", batch, ", ", heads, ", ", kDv, "], got ",
                    out.scalar_type(), " ", out.sizes());
  TORCH_CHECK_VALUE(lse.sizes() == at::IntArrayRef({batch, heads}) &&
                        lse.scalar_type() == at::kFloat,
                    "lse must be float32 [", batch, ", ", heads, "], got ", lse.scalar_type(),
                    " ", lse.sizes());
  const at::Tensor host_out = out.to(at::kCPU).contiguous();
  const at::Tensor host_lse = lse.to(at::kCPU).contiguous();
  const bench::CheckResult check = bench::check_against_reference(
      point.problem,
      std::span(static_cast<const bf16*>(host_out.data_ptr()), host_out.numel()),
      std::span(host_lse.data_ptr<float>(), host_lse.numel()), *point.reference, point.indices);
  return bench::failure_text(check).value_or("");
}

}  // namespace

TORCH_LIBRARY(mlalab, m) {
  m.def(
      "mla_decode(Tensor q, Tensor kv_cache, Tensor block_table, Tensor seq_lens, "
      "float softmax_scale, Tensor? sinks, Tensor(a!) out, Tensor(b!) lse, int? max_context, "
      "int dispatcher) -> ()");
  m.def(
      "dispatcher_new(str layout, int heads, int page_size, str? table, str split) -> int",
      &dispatcher_new);
  m.def("dispatcher_prepare(int handle, int[] batches, int[] max_contexts) -> int",
        &dispatcher_prepare);
  m.def("dispatcher_resolution(int handle, int batch, int max_context) -> str",
        &dispatcher_resolution);
  m.def("dispatcher_free(int handle) -> ()", &dispatcher_free);
  m.def("configs(str layout, int? smem_limit) -> str", &configs);
  m.def(
      "lab_problem(str layout, int heads, int page_size, int[] lengths, int seed) -> "
      "(Tensor, Tensor, Tensor, Tensor, float)",
      &lab_problem);
  m.def(
      "lab_check(str layout, int heads, int page_size, int[] lengths, int seed, Tensor out, "
      "Tensor lse) -> str",
      &lab_check);
}

TORCH_LIBRARY_IMPL(mlalab, CPU, m) { m.impl("mla_decode", &mla_decode_cpu); }

TORCH_LIBRARY_IMPL(mlalab, CUDA, m) { m.impl("mla_decode", &mla_decode_cuda); }

}  // namespace mlalab::torch_binding
