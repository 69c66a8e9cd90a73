#pragma once
// The checks of option values that every subcommand shares: integers and lists of them in a
// range, a run's budget in minutes, output files and folders. A value is checked while the
// command line is parsed, so a refused one stops mlalab (exit status 2) before anything runs.
// A refusal reads like the experiment file's errors: the option, the value as given, and what
// is allowed:
//
//   --max-minutes 0: allowed (0, 10080] minutes
//   --seed abc: not an integer; allowed [0, 2^63)
//   --json /nonexistent/x.json: no such folder /nonexistent
#include <CLI/CLI.hpp>

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "ab/experiment.h"
#include "dispatch/tuning_table.h"

namespace mlalab::cli {

// Integers from low to high, both included.
struct IntegerRange {
  std::int64_t low = 0;
  std::int64_t high = 0;
  std::string_view unit{};  // printed after the range, e.g. "bytes"
};

// The ranges of the experiment-file settings that `mlalab ab` overrides are the file's own
// (ab/experiment.h), so that a value the command line accepts is one the file accepts.
// decision.seed: [0, 2^63); bench's --seed takes the same.
inline constexpr IntegerRange kSeedRange{.low = 0, .high = ab::kMaxSeed};
// measure.max_minutes: (0, a week].
using ab::kMaxRunMinutes;

// "1,8,64" → {"1", "8", "64"}; "" → {""}.
std::vector<std::string_view> split_commas(std::string_view text);

// "[1, 128]"; "[0, 2^63)" when high is the largest int64 (2^63 − 1); the unit after it.
std::string range_text(const IntegerRange& range);

// A check of one option's text, named `option` in the message: the value, or nullopt with the
// refusal in *error.
template <typename Value>
using OptionCheck = std::function<std::optional<Value>(
    const std::string& option, const std::string& text, std::string* error)>;

// A decimal integer in the range.
OptionCheck<std::int64_t> integer_in(IntegerRange range);
// A power of two in the range.
OptionCheck<std::int64_t> power_of_two_in(IntegerRange range);
// A comma-separated list of decimal integers, each in the range (which int must hold).
OptionCheck<std::vector<int>> integer_list_in(IntegerRange range);
// A run's budget in minutes, in (0, kMaxRunMinutes].
OptionCheck<double> run_minutes();
// measure.heat_ms, in [0, ab::kMaxHeatMs].
OptionCheck<double> heat_milliseconds();
// measure.launches_per_sample, in [1, ab::kMaxLaunchesPerSample].
OptionCheck<std::int64_t> launches_per_sample();
// Sequence lengths in dispatch::parse_lengths's forms (equal, uniform, uniform:F).
OptionCheck<dispatch::TunedLengths> sequence_lengths();
// A file to write: its folder exists and is writable, and the path is not a folder.
OptionCheck<std::string> output_file();
// A folder to write into, created when missing: it is a writable folder, or the nearest part
// of the path that exists is.
OptionCheck<std::string> output_folder();

// The compiled kernel variants' names, comma-separated: what a variant option allows.
std::string compiled_variant_names();
// A comma-separated list of compiled variant names, or the word "all" (every compiled one:
// bench::kAllVariants).
CLI::Validator variant_list_validator();

// Adds the option `name` to `command`: its text goes through `check` while the command line
// is parsed and the value into `target`; a refusal stops the parse with the check's message
// as it is (a CLI::ValidationError, which main turns into exit status 2).
template <typename Target, typename Value>
CLI::Option* add_checked_option(CLI::App& command, const std::string& name, Target& target,
                                OptionCheck<Value> check, const std::string& description) {
  return command.add_option_function<std::string>(
      name,
      [name, &target, check = std::move(check)](const std::string& text) {
        std::string error;
        std::optional<Value> value = check(name, text, &error);
        if (!value) throw CLI::ValidationError(error);
        target = static_cast<Target>(std::move(*value));
      },
      description);
}

}  // namespace mlalab::cli
