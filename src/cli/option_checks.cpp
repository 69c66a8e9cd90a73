#include "cli/option_checks.h"

#include <unistd.h>

#include <fmt/format.h>

#include <charconv>
#include <filesystem>
#include <system_error>

#include "bench/bench_runner.h"
#include "core/nearest_word.h"
#include "kernels/registry.h"

namespace mlalab::cli {
namespace {

// "--seed -1: allowed [0, 2^63)", or with what is wrong besides the range:
// "--seed abc: not an integer; allowed [0, 2^63)".
std::string refusal(const std::string& option, const std::string& text, std::string_view problem,
                    std::string_view allowed) {
  if (problem.empty()) return fmt::format("{} {}: allowed {}", option, text, allowed);
  return fmt::format("{} {}: {}; allowed {}", option, text, problem, allowed);
}

// The whole text as a decimal integer. nullopt for an integer beyond int64 (out of every
// range here: *is_integer is set) and for text that is no integer (*is_integer is cleared).
std::optional<std::int64_t> whole_integer(std::string_view text, bool* is_integer) {
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  *is_integer = !text.empty() && end == text.data() + text.size() &&
                (ec == std::errc{} || ec == std::errc::result_out_of_range);
  if (!*is_integer || ec != std::errc{}) return std::nullopt;
  return value;
}

bool in_range(std::optional<std::int64_t> value, const IntegerRange& range) {
  return value && *value >= range.low && *value <= range.high;
}

std::filesystem::file_type type_of(const std::filesystem::path& path) {
  std::error_code ignored;  // a path that cannot be inspected counts as not found
  return std::filesystem::status(path, ignored).type();
}

// Whether this process may create and write files in the folder (root may write anywhere but
// on a read-only file system; access() knows both).
bool folder_writable(const std::filesystem::path& folder) {
  return access(folder.c_str(), W_OK | X_OK) == 0;
}

// A decimal number from low (excluded when low_open) to high (included), the unit after it.
OptionCheck<double> number_in(double low, bool low_open, double high, std::string_view unit) {
  return [=](const std::string& option, const std::string& text,
             std::string* error) -> std::optional<double> {
    const std::string allowed =
        fmt::format("{}{:g}, {:g}] {}", low_open ? "(" : "[", low, high, unit);
    double value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || end != text.data() + text.size() ||
        (ec != std::errc{} && ec != std::errc::result_out_of_range)) {
      *error = refusal(option, text, "not a number", allowed);
      return std::nullopt;
    }
    // Written so that NaN, which compares false with everything, is refused too.
    const bool above_low = low_open ? value > low : value >= low;
    if (ec != std::errc{} || !(above_low && value <= high)) {
      *error = refusal(option, text, "", allowed);
      return std::nullopt;
    }
    return value;
  };
}

}  // namespace

std::vector<std::string_view> split_commas(std::string_view text) {
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  while (true) {
    const auto comma = text.find(',', start);
    parts.push_back(text.substr(start, comma - start));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return parts;
}

std::string range_text(const IntegerRange& range) {
  const std::string text =
      range.high == std::numeric_limits<std::int64_t>::max()
          ? fmt::format("[{}, 2^63)", range.low)
          : fmt::format("[{}, {}]", range.low, range.high);
  return range.unit.empty() ? text : fmt::format("{} {}", text, range.unit);
}

OptionCheck<std::int64_t> integer_in(IntegerRange range) {
  return [range](const std::string& option, const std::string& text,
                 std::string* error) -> std::optional<std::int64_t> {
    bool is_integer = false;
    const auto value = whole_integer(text, &is_integer);
    if (!is_integer) {
      *error = refusal(option, text, "not an integer", range_text(range));
      return std::nullopt;
    }
    if (!in_range(value, range)) {
      *error = refusal(option, text, "", range_text(range));
      return std::nullopt;
    }
    return value;
  };
}

OptionCheck<std::int64_t> power_of_two_in(IntegerRange range) {
  return [range](const std::string& option, const std::string& text,
                 std::string* error) -> std::optional<std::int64_t> {
    const std::string allowed = "a power of two in " + range_text(range);
    bool is_integer = false;
    const auto value = whole_integer(text, &is_integer);
    if (!is_integer) {
      *error = refusal(option, text, "not an integer", allowed);
      return std::nullopt;
    }
    const bool power_of_two = value && *value > 0 && (*value & (*value - 1)) == 0;
    if (!in_range(value, range) || !power_of_two) {
      *error = refusal(option, text, "", allowed);
      return std::nullopt;
    }
    return value;
  };
}

OptionCheck<std::vector<int>> integer_list_in(IntegerRange range) {
  return [range](const std::string& option, const std::string& text,
                 std::string* error) -> std::optional<std::vector<int>> {
    const std::string allowed = "a comma-separated list of integers in " + range_text(range);
    std::vector<int> values;
    for (const std::string_view part : split_commas(text)) {
      bool is_integer = false;
      const auto value = whole_integer(part, &is_integer);
      if (!is_integer) {
        *error = refusal(option, text, fmt::format("'{}' is not an integer", part), allowed);
        return std::nullopt;
      }
      if (!in_range(value, range)) {
        *error = refusal(option, text, fmt::format("{} is out of range", part), allowed);
        return std::nullopt;
      }
      values.push_back(static_cast<int>(*value));
    }
    return values;
  };
}

OptionCheck<dispatch::TunedLengths> sequence_lengths() {
  return [](const std::string& option, const std::string& text, std::string* error) {
    const auto lengths = dispatch::parse_lengths(text);
    if (!lengths) *error = fmt::format("{} {}: allowed {}", option, text, dispatch::kLengthsForms);
    return lengths;
  };
}

OptionCheck<double> run_minutes() { return number_in(0, true, kMaxRunMinutes, "minutes"); }

OptionCheck<double> heat_milliseconds() { return number_in(0, false, ab::kMaxHeatMs, "ms"); }

OptionCheck<std::int64_t> launches_per_sample() {
  return integer_in({.low = 1, .high = ab::kMaxLaunchesPerSample});
}

OptionCheck<std::string> output_file() {
  return [](const std::string& option, const std::string& text,
            std::string* error) -> std::optional<std::string> {
    namespace fs = std::filesystem;
    if (text.empty()) {
      *error = fmt::format("{}: no file name given", option);
      return std::nullopt;
    }
    const fs::path path(text);
    const fs::path folder = path.parent_path().empty() ? fs::path(".") : path.parent_path();
    const fs::file_type file_type = type_of(path);
    const fs::file_type folder_type = type_of(folder);
    if (file_type == fs::file_type::directory) {
      *error = fmt::format("{} {}: is a folder, not a file", option, text);
    } else if (folder_type == fs::file_type::not_found) {
      *error = fmt::format("{} {}: no such folder {}", option, text, folder.string());
    } else if (folder_type != fs::file_type::directory) {
      *error = fmt::format("{} {}: {} is not a folder", option, text, folder.string());
    } else if (file_type != fs::file_type::not_found && access(path.c_str(), W_OK) != 0) {
      *error = fmt::format("{} {}: the file is not writable", option, text);
    } else if (file_type == fs::file_type::not_found && !folder_writable(folder)) {
      *error = fmt::format("{} {}: folder {} is not writable", option, text, folder.string());
    } else {
      return text;
    }
    return std::nullopt;
  };
}

OptionCheck<std::string> output_folder() {
  return [](const std::string& option, const std::string& text,
            std::string* error) -> std::optional<std::string> {
    namespace fs = std::filesystem;
    if (text.empty()) {
      *error = fmt::format("{}: no folder given", option);
      return std::nullopt;
    }
    // The folder itself, or the nearest part of its path that exists (where it would be made).
    fs::path existing(text);
    while (!existing.empty() && type_of(existing) == fs::file_type::not_found) {
      existing = existing.parent_path();
    }
    if (existing.empty()) existing = ".";
    const bool is_the_folder = type_of(text) != fs::file_type::not_found;
    const std::string where = is_the_folder ? "" : "cannot create it: ";
    if (type_of(existing) != fs::file_type::directory) {
      *error = fmt::format("{} {}: {}{} is not a folder", option, text, where, existing.string());
    } else if (!folder_writable(existing)) {
      *error = fmt::format("{} {}: {}folder {} is not writable", option, text, where,
                           existing.string());
    } else {
      return text;
    }
    return std::nullopt;
  };
}

std::string compiled_variant_names() {
  std::string names;
  for (const auto& variant : kernels::compiled_variants()) {
    names += (names.empty() ? "" : ", ") + variant.name;
  }
  return names;
}

CLI::Validator variant_list_validator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        for (const auto& name : split_commas(text)) {
          if (name != bench::kAllVariants && kernels::find_variant(name) == nullptr) {
            std::vector<std::string> names;
            for (const auto& variant : kernels::compiled_variants()) {
              names.push_back(variant.name);
            }
            const auto nearest = nearest_word(name, names);
            return fmt::format("unknown variant '{}'{}: allowed '{}' or a compiled variant: {}",
                               name,
                               nearest ? fmt::format(" (did you mean '{}'?)", *nearest) : "",
                               bench::kAllVariants, compiled_variant_names());
          }
        }
        return {};
      },
      "", "variant");
}

}  // namespace mlalab::cli
