#include "ab/environment.h"

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace mlalab::ab {
namespace {

std::string host_name() {
  constexpr std::size_t kHostNameChars = 256;
  std::array<char, kHostNameChars> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) return "unknown";
  return name.data();
}

// PCI bus id of the current device (how nvidia-smi names it whatever CUDA_VISIBLE_DEVICES
// says), restricted to the characters a bus id has, since it goes into a command line.
std::string current_bus_id() {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return {};
  constexpr int kBusIdChars = 32;
  std::array<char, kBusIdChars> bus_id{};
  if (cudaDeviceGetPCIBusId(bus_id.data(), kBusIdChars, device) != cudaSuccess) return {};
  std::string text(bus_id.data());
  const bool safe = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.';
  });
  return safe ? text : std::string{};
}

struct PipeCloser {
  void operator()(std::FILE* pipe) const { pclose(pipe); }
};

// The SM clock, the maximum SM clock and the memory clock in MHz from one nvidia-smi call;
// -1 for each it cannot tell.
std::array<int, 3> nvidia_smi_clocks() {
  std::array<int, 3> clocks = {-1, -1, -1};
  const std::string bus_id = current_bus_id();
  if (bus_id.empty()) return clocks;
  const std::string command = fmt::format(
      "nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.mem --format=csv,noheader,nounits "
      "-i {} 2>/dev/null",
      bus_id);
  std::unique_ptr<std::FILE, PipeCloser> pipe(popen(command.c_str(), "r"));
  if (!pipe) return clocks;
  constexpr int kLineChars = 256;
  std::array<char, kLineChars> line{};
  if (std::fgets(line.data(), kLineChars, pipe.get()) == nullptr) return clocks;
  std::string_view rest(line.data());
  for (int& clock : clocks) {
    const auto comma = rest.find(',');
    std::string_view field = rest.substr(0, comma);
    while (!field.empty() && std::isspace(static_cast<unsigned char>(field.front()))) {
      field.remove_prefix(1);
    }
    while (!field.empty() && std::isspace(static_cast<unsigned char>(field.back()))) {
      field.remove_suffix(1);
    }
    int mhz = 0;
    const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), mhz);
    if (ec == std::errc{} && end == field.data() + field.size() && mhz > 0) clock = mhz;
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return clocks;
}

}  // namespace

EnvironmentRecord cuda_environment(const bench::DeviceInfo& device) {
  const auto [sm_mhz, max_sm_mhz, mem_mhz] = nvidia_smi_clocks();
  return EnvironmentRecord{
      .backend = "cuda",
      .gpu = device.gpu,
      .sm_count = device.sm_count,
      .sm_clock_mhz = sm_mhz > 0 ? sm_mhz : (device.sm_clock_is_current ? device.sm_clock_mhz : -1),
      .max_sm_clock_mhz = max_sm_mhz > 0 ? max_sm_mhz : device.max_sm_clock_mhz,
      .mem_clock_mhz = mem_mhz,
      .driver = device.driver,
      .cuda_runtime = device.cuda_runtime,
      .commit = bench::git_commit(),
      .host = host_name(),
  };
}

EnvironmentRecord cpu_environment() {
  const int threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  EnvironmentRecord environment;
  environment.backend = "cpu";
  environment.gpu = fmt::format("cpu ({} threads)", threads);
  environment.commit = bench::git_commit();
  environment.host = host_name();
  return environment;
}

}  // namespace mlalab::ab
