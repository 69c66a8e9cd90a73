#pragma once
// What runs an experiment's or a benchmark's kernels, and its one name table: experiment files,
// the command line, results.json, fingerprints and reports all spell a backend as
// backend_name() does, and read it back with parse_backend().
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace mlalab {

enum class Backend {
  kCuda,  // the GPU's kernels
  kCpu,   // the CPU backend (kernels/cpu)
  kNone,  // no kernel backend: an experiment whose arms are commands
};

inline constexpr std::array<std::pair<Backend, std::string_view>, 3> kBackendNames{{
    {Backend::kCuda, "cuda"},
    {Backend::kCpu, "cpu"},
    {Backend::kNone, "none"},
}};

constexpr std::string_view backend_name(Backend backend) {
  for (const auto& [value, name] : kBackendNames) {
    if (value == backend) return name;
  }
  return "unknown";
}

constexpr std::optional<Backend> parse_backend(std::string_view name) {
  for (const auto& [value, spelled] : kBackendNames) {
    if (spelled == name) return value;
  }
  return std::nullopt;
}

// Every name, for messages that list the allowed ones: "cuda, cpu, none".
inline std::string backend_names_text() {
  std::string text;
  for (const auto& [value, name] : kBackendNames) {
    text += (text.empty() ? "" : ", ") + std::string(name);
  }
  return text;
}

}  // namespace mlalab
