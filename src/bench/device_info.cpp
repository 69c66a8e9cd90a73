#include "bench/device_info.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <memory>
#include <string_view>

#include "bench/cuda_raii.h"

namespace mlalab::bench {
namespace {

constexpr int kKhzPerMhz = 1000;

// CUDA encodes versions as 1000 · major + 10 · minor.
std::string cuda_version_string(int version) {
  constexpr int kMajorScale = 1000;
  constexpr int kMinorScale = 10;
  return fmt::format("{}.{}", version / kMajorScale, (version % kMajorScale) / kMinorScale);
}

int device_attribute(cudaDeviceAttr attribute, int device) {
  int value = 0;
  MLALAB_CUDA_TRY(cudaDeviceGetAttribute(&value, attribute, device));
  return value;
}

// PCI bus id of the current device, which is how nvidia-smi names the same GPU whatever
// CUDA_VISIBLE_DEVICES says. Empty when unavailable.
std::string current_bus_id() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return {};
  constexpr int kBusIdChars = 32;  // "0000:3B:00.0" plus room; the API asks for ≥ 13
  std::array<char, kBusIdChars> bus_id{};
  if (cudaDeviceGetPCIBusId(bus_id.data(), kBusIdChars, device) != cudaSuccess) return {};
  std::string text(bus_id.data());
  // The id goes into a shell command line: accept only the characters a bus id has.
  const bool safe = std::all_of(text.begin(), text.end(), [](char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.';
  });
  return safe ? text : std::string{};
}

struct PipeCloser {
  void operator()(std::FILE* pipe) const { pclose(pipe); }
};

// One field of `nvidia-smi --query-gpu` for the GPU at bus_id, trimmed; nullopt when
// nvidia-smi is missing, fails or prints nothing.
std::optional<std::string> query_nvidia_smi(std::string_view field, const std::string& bus_id) {
  if (bus_id.empty()) return std::nullopt;
  const std::string command = fmt::format(
      "nvidia-smi --query-gpu={} --format=csv,noheader,nounits -i {} 2>/dev/null", field, bus_id);
  std::unique_ptr<std::FILE, PipeCloser> pipe(popen(command.c_str(), "r"));
  if (!pipe) return std::nullopt;
  constexpr int kLineChars = 256;
  std::array<char, kLineChars> line{};
  if (std::fgets(line.data(), kLineChars, pipe.get()) == nullptr) return std::nullopt;
  std::string text(line.data());
  const auto is_space = [](unsigned char c) { return std::isspace(c) != 0; };
  while (!text.empty() && is_space(text.back())) text.pop_back();
  const auto first = std::find_if_not(text.begin(), text.end(), is_space);
  text.erase(text.begin(), first);
  if (text.empty() || text.find("N/A") != std::string::npos) return std::nullopt;
  return text;
}

}  // namespace

int read_sm_clock_mhz() {
  const auto text = query_nvidia_smi("clocks.sm", current_bus_id());
  if (!text) return -1;
  int mhz = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), mhz);
  if (ec != std::errc{} || end != text->data() + text->size() || mhz <= 0) return -1;
  return mhz;
}

std::string no_device_reason(cudaError_t status, bool driver_installed) {
  if (!driver_installed || status == cudaErrorNoDevice) return "no NVIDIA driver/GPU found";
  if (status == cudaErrorInsufficientDriver) {
    return fmt::format("the NVIDIA driver is too old for CUDA {} ({})",
                       cuda_version_string(CUDART_VERSION), cudaGetErrorString(status));
  }
  return fmt::format("the NVIDIA driver is installed, but CUDA cannot use a GPU ({})",
                     cudaGetErrorString(status));
}

bool nvidia_driver_installed() {
  void* library = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (library == nullptr) return false;
  dlclose(library);
  return true;
}

std::optional<DeviceInfo> query_device(std::string* why_not) {
  int count = 0;
  cudaError_t status = cudaGetDeviceCount(&count);
  cudaGetLastError();  // clear, so later CUDA calls do not report it again
  if (status == cudaSuccess && count == 0) status = cudaErrorNoDevice;
  if (status != cudaSuccess) {
    if (why_not) *why_not = no_device_reason(status, nvidia_driver_installed());
    return std::nullopt;
  }
  try {
    int device = 0;
    MLALAB_CUDA_TRY(cudaGetDevice(&device));
    cudaDeviceProp properties{};
    MLALAB_CUDA_TRY(cudaGetDeviceProperties(&properties, device));
    int driver_version = 0;
    int runtime_version = 0;
    MLALAB_CUDA_TRY(cudaDriverGetVersion(&driver_version));
    MLALAB_CUDA_TRY(cudaRuntimeGetVersion(&runtime_version));

    DeviceInfo info{
        .gpu = properties.name,
        .sm_count = device_attribute(cudaDevAttrMultiProcessorCount, device),
        .max_sm_clock_mhz = device_attribute(cudaDevAttrClockRate, device) / kKhzPerMhz,
        .cuda_runtime = cuda_version_string(runtime_version),
        .l2_bytes = static_cast<std::size_t>(device_attribute(cudaDevAttrL2CacheSize, device)),
        .smem_optin_bytes = device_attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
        .smem_per_sm_bytes = device_attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor, device),
        .global_mem_bytes = properties.totalGlobalMem,
        .cc_major = properties.major,
        .cc_minor = properties.minor,
    };
    const std::string bus_id = current_bus_id();
    const std::string driver_api = "CUDA " + cuda_version_string(driver_version);
    const auto kernel_driver = query_nvidia_smi("driver_version", bus_id);
    info.driver = kernel_driver ? fmt::format("{} ({})", *kernel_driver, driver_api) : driver_api;
    const int current_mhz = read_sm_clock_mhz();
    info.sm_clock_is_current = current_mhz > 0;
    info.sm_clock_mhz = info.sm_clock_is_current ? current_mhz : info.max_sm_clock_mhz;
    return info;
  } catch (const CudaError& error) {
    if (why_not) *why_not = error.what();
    return std::nullopt;
  }
}

std::string git_commit() {
  // Written at every build by cmake/git_commit.cmake.
  return
#include "git_commit.inc"
      ;
}

}  // namespace mlalab::bench
