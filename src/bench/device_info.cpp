#include "bench/device_info.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <memory>
#include <string_view>
#include <vector>

#include "kernels/device.h"

namespace mlalab::bench {
namespace {


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

std::string trimmed(std::string_view text) {
  const auto is_space = [](unsigned char c) { return std::isspace(c) != 0; };
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return std::string(text);
}

// Fields of `nvidia-smi --query-gpu` for the current GPU, from one call, trimmed, in the order
// asked; each nullopt when nvidia-smi is missing, fails, or has nothing for it ("N/A").
std::vector<std::optional<std::string>> query_nvidia_smi(
    const std::vector<std::string_view>& fields) {
  std::vector<std::optional<std::string>> values(fields.size());
  const std::string bus_id = current_bus_id();
  if (bus_id.empty()) return values;
  const std::string command =
      fmt::format("nvidia-smi --query-gpu={} --format=csv,noheader,nounits -i {} 2>/dev/null",
                  fmt::join(fields, ","), bus_id);
  std::unique_ptr<std::FILE, PipeCloser> pipe(popen(command.c_str(), "r"));
  if (!pipe) return values;
  constexpr int kLineChars = 512;
  std::array<char, kLineChars> line{};
  if (std::fgets(line.data(), kLineChars, pipe.get()) == nullptr) return values;
  std::string_view rest(line.data());
  for (auto& value : values) {
    const auto comma = rest.find(',');
    std::string text = trimmed(rest.substr(0, comma));
    if (!text.empty() && text.find("N/A") == std::string::npos) value = std::move(text);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return values;
}

// A field of query_nvidia_smi that is wholly a positive number (MHz as int, watts as double);
// -1 otherwise.
template <typename Number>
Number positive_of(const std::optional<std::string>& text) {
  if (!text) return -1;
  Number value = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  return ec == std::errc{} && end == text->data() + text->size() && value > 0 ? value : -1;
}
int mhz_of(const std::optional<std::string>& text) { return positive_of<int>(text); }
double watts_of(const std::optional<std::string>& text) { return positive_of<double>(text); }

}  // namespace

GpuClocks read_gpu_clocks() {
  const auto fields =
      query_nvidia_smi({"clocks.sm", "clocks.max.sm", "clocks.mem", "power.limit"});
  return {.sm_mhz = mhz_of(fields[0]), .max_sm_mhz = mhz_of(fields[1]),
          .mem_mhz = mhz_of(fields[2]), .power_limit_w = watts_of(fields[3])};
}

int read_sm_clock_mhz() { return mhz_of(query_nvidia_smi({"clocks.sm"})[0]); }

GpuLoadReading read_sm_clock_and_power() {
  const auto fields = query_nvidia_smi({"clocks.sm", "power.draw"});
  return {.sm_mhz = mhz_of(fields[0]), .power_w = watts_of(fields[1])};
}

std::string no_device_reason(cudaError_t status, bool driver_installed) {
  if (!driver_installed || status == cudaErrorNoDevice) return "no NVIDIA driver/GPU found";
  if (status == cudaErrorInsufficientDriver) {
    return fmt::format("the NVIDIA driver is too old for CUDA {} ({})",
                       kernels::cuda_version_text(CUDART_VERSION), cudaGetErrorString(status));
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
  // The device's own facts come from the one place that asks the CUDA runtime for them.
  const kernels::CurrentDevice& device = kernels::current_device();
  if (!device.present) {
    if (why_not) *why_not = "the CUDA runtime cannot describe the current device";
    return std::nullopt;
  }
  DeviceInfo info{
      .gpu = device.name,
      .sm_count = device.sm_count,
      .max_sm_clock_mhz = device.max_sm_clock_mhz,
      .cuda_runtime = kernels::cuda_version_text(device.cuda_runtime_version),
      .l2_bytes = device.l2_bytes,
      .smem_optin_bytes = device.smem_optin_bytes,
      .smem_per_sm_bytes = device.smem_per_sm_bytes,
      .global_mem_bytes = device.global_mem_bytes,
      .cc_major = device.compute_capability / 10,
      .cc_minor = device.compute_capability % 10,
  };
  const auto nvidia_smi = query_nvidia_smi({"driver_version", "clocks.sm"});
  const std::string driver_api = "CUDA " + kernels::cuda_version_text(device.cuda_driver_version);
  info.driver = nvidia_smi[0] ? fmt::format("{} ({})", *nvidia_smi[0], driver_api) : driver_api;
  const int current_mhz = mhz_of(nvidia_smi[1]);
  info.sm_clock_is_current = current_mhz > 0;
  info.sm_clock_mhz = info.sm_clock_is_current ? current_mhz : info.max_sm_clock_mhz;
  return info;
}

std::string git_commit() {
  // Written at every build by cmake/git_commit.cmake.
  return
#include "git_commit.inc"
      ;
}

}  // namespace mlalab::bench
