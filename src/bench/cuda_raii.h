#pragma once
// RAII owners for the CUDA objects the harness uses (buffers, events, streams, graphs) and
// the one error type they throw. Library launchers return cudaError_t; the harness, which
// owns resources, turns failures into CudaError with the call's text, file and line.
#include <cuda_runtime_api.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace mlalab::bench {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const char* call, const char* file, int line)
      : std::runtime_error(std::string(call) + " failed: " + cudaGetErrorString(code) + " (" +
                           file + ":" + std::to_string(line) + ")"),
        code_(code) {}
  cudaError_t code() const { return code_; }

 private:
  cudaError_t code_;
};

#define MLALAB_CUDA_TRY(call)                                                        \
  do {                                                                               \
    const cudaError_t mlalab_status_ = (call);                                       \
    if (mlalab_status_ != cudaSuccess) {                                             \
      throw ::mlalab::bench::CudaError(mlalab_status_, #call, __FILE__, __LINE__);   \
    }                                                                                \
  } while (0)

// Owns `count` elements of device memory.
template <typename T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    if (count_ > 0) MLALAB_CUDA_TRY(cudaMalloc(reinterpret_cast<void**>(&data_), bytes()));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  DeviceBuffer(DeviceBuffer&& other) noexcept { swap(other); }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    DeviceBuffer(std::move(other)).swap(*this);
    return *this;
  }
  ~DeviceBuffer() {
    if (data_) cudaFree(data_);
  }

  static DeviceBuffer from_host(const std::vector<T>& host) {
    DeviceBuffer buffer(host.size());
    buffer.upload(host);
    return buffer;
  }
  void upload(const std::vector<T>& host) {
    if (host.size() != count_) throw std::invalid_argument("DeviceBuffer::upload: size mismatch");
    if (count_ > 0) MLALAB_CUDA_TRY(cudaMemcpy(data_, host.data(), bytes(), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(count_);
    if (count_ > 0) MLALAB_CUDA_TRY(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost));
    return host;
  }

  T* data() const { return data_; }
  std::size_t size() const { return count_; }
  std::size_t bytes() const { return count_ * sizeof(T); }

 private:
  void swap(DeviceBuffer& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
  }
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

class CudaEvent {
 public:
  CudaEvent() { MLALAB_CUDA_TRY(cudaEventCreate(&event_)); }
  CudaEvent(const CudaEvent&) = delete;
  CudaEvent& operator=(const CudaEvent&) = delete;
  ~CudaEvent() { cudaEventDestroy(event_); }
  void record(cudaStream_t stream) { MLALAB_CUDA_TRY(cudaEventRecord(event_, stream)); }
  cudaEvent_t get() const { return event_; }

  // Milliseconds between two recorded events (synchronizes on `end`).
  static float elapsed_ms(const CudaEvent& start, const CudaEvent& end) {
    MLALAB_CUDA_TRY(cudaEventSynchronize(end.event_));
    float ms = 0.0f;
    MLALAB_CUDA_TRY(cudaEventElapsedTime(&ms, start.event_, end.event_));
    return ms;
  }

 private:
  cudaEvent_t event_ = nullptr;
};

class CudaStream {
 public:
  CudaStream() { MLALAB_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking)); }
  CudaStream(const CudaStream&) = delete;
  CudaStream& operator=(const CudaStream&) = delete;
  ~CudaStream() { cudaStreamDestroy(stream_); }
  cudaStream_t get() const { return stream_; }
  void synchronize() const { MLALAB_CUDA_TRY(cudaStreamSynchronize(stream_)); }

 private:
  cudaStream_t stream_ = nullptr;
};

// A captured and instantiated graph: capture(stream, fn) records fn's launches once;
// replay(stream) launches them again with no host-side launch cost per kernel.
class CudaGraph {
 public:
  CudaGraph() = default;
  CudaGraph(const CudaGraph&) = delete;
  CudaGraph& operator=(const CudaGraph&) = delete;
  ~CudaGraph() { reset(); }

  template <typename Fn>
  void capture(cudaStream_t stream, Fn&& record_launches) {
    reset();
    MLALAB_CUDA_TRY(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    try {
      record_launches(stream);
    } catch (...) {
      cudaGraph_t partial = nullptr;
      cudaStreamEndCapture(stream, &partial);
      if (partial) cudaGraphDestroy(partial);
      throw;
    }
    MLALAB_CUDA_TRY(cudaStreamEndCapture(stream, &graph_));
    MLALAB_CUDA_TRY(cudaGraphInstantiate(&exec_, graph_, 0));
  }
  void replay(cudaStream_t stream) const { MLALAB_CUDA_TRY(cudaGraphLaunch(exec_, stream)); }

 private:
  void reset() {
    if (exec_) cudaGraphExecDestroy(exec_);
    if (graph_) cudaGraphDestroy(graph_);
    exec_ = nullptr;
    graph_ = nullptr;
  }
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

}  // namespace mlalab::bench
