#include "ab/experiment.h"

// toml++ is used header-only: the binary must run where libtomlplusplus.so is not installed.
// Only this file includes it, so the definition cannot disagree with another unit's.
#define TOML_HEADER_ONLY 1
#include <nlohmann/json.hpp>
#include <toml++/toml.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <memory>
#include <numeric>
#include <regex>
#include <sstream>
#include <string_view>

#include "ab/context_lengths.h"
#include "bench/bench_runner.h"
#include "core/nearest_word.h"
#include "core/validate.h"
#include "dispatch/tuning_table.h"

namespace mlalab::ab {
namespace {

// Ranges of the schema (experiment.h lists them all), each with the reason for its bound.
constexpr int kMaxNameChars = 64;  // arm names head report columns; longer ones wrap them
constexpr int kMaxKnobValue = 1024;  // far above any tile dimension; larger is a typo
constexpr int kMaxCpuThreads = 4096;
constexpr double kMaxAlpha = 0.5;  // above it a test calls noise a change more often than not
constexpr double kMaxMinEffectPct = 100.0;
constexpr int kMaxRounds = 1000000;
constexpr double kMaxTimeBudgetS = 7 * 24 * 3600.0;
constexpr double kMaxTimeoutS = 24 * 3600.0;
constexpr double kMaxSigma = 4.0;  // beyond it nearly every length is clamped to min or max
constexpr double kMinPredictionPct = -100.0;  // a throughput cannot fall by more than all of it
constexpr double kMaxPredictionPct = 10000.0;
constexpr int kDefaultCpuThreads = 0;  // every hardware thread

// The keys each table may hold; anything else is refused.
const std::vector<std::string_view> kRootKeys = {
    "name", "hypothesis", "backend", "sweep", "measure", "decision", "baseline", "variant"};
const std::vector<std::string_view> kSweepKeys = {"layout", "heads", "page_size", "concurrency",
                                                  "context"};
const std::vector<std::string_view> kUniformKeys = {"distribution", "min", "max", "seed"};
const std::vector<std::string_view> kLogNormalKeys = {"distribution", "median", "sigma",
                                                      "min",          "max",    "seed"};
const std::vector<std::string_view> kMeasureKeys = {
    "launches_per_sample", "max_minutes", "throttle_fraction", "heat_ms",
    "instances_per_arm"};
const std::vector<std::string_view> kDecisionKeys = {
    "min_effect_pct", "alpha", "min_rounds", "max_rounds",
    "time_budget_s",  "seed",  "correction", "family"};
const std::vector<std::string_view> kKnobKeys = {"block_h", "block_t", "warps", "stages"};

std::vector<std::string_view> joined(std::initializer_list<std::vector<std::string_view>> lists) {
  std::vector<std::string_view> keys;
  for (const auto& list : lists) keys.insert(keys.end(), list.begin(), list.end());
  return keys;
}

// An arm's keys: those that choose an mlalab kernel, a Python arm's, a command arm's.
const std::vector<std::string_view> kNotPythonArmKeys = {
    "variant", "block_h", "block_t", "warps", "stages", "split", "threads", "table", "build"};
const std::vector<std::string_view> kKernelArmKeys = joined({kNotPythonArmKeys,
                                                             {"python", "params"}});
const std::vector<std::string_view> kCommandArmKeys = {"command", "env", "metric", "better",
                                                       "timeout_s"};
const std::vector<std::string_view> kArmKeys = joined({{"name", "prediction"}, kKernelArmKeys,
                                                       kCommandArmKeys});

std::string join(const std::vector<std::string>& parts, std::string_view separator = ", ") {
  std::string joined;
  for (const auto& part : parts) {
    if (!joined.empty()) joined += separator;
    joined += part;
  }
  return joined;
}

std::string join(const std::vector<std::string_view>& parts) {
  return join(std::vector<std::string>(parts.begin(), parts.end()));
}

bool contains(const std::vector<std::string_view>& list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

// The closest known key, when it is close enough to be a likely typo.
std::optional<std::string_view> closest_key(std::string_view key,
                                            const std::vector<std::string_view>& known) {
  const auto nearest = nearest_word(key, std::vector<std::string>(known.begin(), known.end()));
  if (!nearest) return std::nullopt;
  return *std::find(known.begin(), known.end(), *nearest);
}

int line_of(const toml::source_region& source) { return static_cast<int>(source.begin.line); }
int line_of(const toml::node& node) { return line_of(node.source()); }

std::string type_phrase(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a float";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    case toml::node_type::date: return "a date";
    case toml::node_type::time: return "a time";
    case toml::node_type::date_time: return "a date-time";
    case toml::node_type::none: break;
  }
  return "nothing";
}

// A number as the user wrote it, without trailing zeros: 0.7, not 0.700000.
std::string number_text(double value) { return fmt::format("{}", value); }

std::string ordinal(int n) {
  const int last_two = n % 100;
  const char* suffix = "th";
  if (last_two < 11 || last_two > 13) {
    switch (n % 10) {
      case 1: suffix = "st"; break;
      case 2: suffix = "nd"; break;
      case 3: suffix = "rd"; break;
      default: break;
    }
  }
  return fmt::format("{}{}", n, suffix);
}

bool is_valid_experiment_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
  });
}

bool is_valid_env_name(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

bool has_control_characters(std::string_view text) {
  return std::any_of(text.begin(), text.end(),
                     [](char c) { return std::iscntrl(static_cast<unsigned char>(c)) != 0; });
}

// Characters, not bytes: names may hold "A′" or "µs".
int utf8_length(std::string_view text) {
  constexpr unsigned char kContinuationMask = 0xC0;
  constexpr unsigned char kContinuationBits = 0x80;
  return static_cast<int>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & kContinuationMask) != kContinuationBits;
  }));
}

bool is_blank(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; });
}

// A shell word for arm_config_text: bare when it needs no quoting, single-quoted otherwise.
std::string shell_word(const std::string& word) {
  const bool bare = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || std::strchr("_-./:=,+@%", c) != nullptr;
  });
  if (bare) return word;
  std::string quoted = "'";
  for (const char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string what_text(const std::string& path, int line, int column, const std::string& field,
                      const std::string& message) {
  std::string where = path.empty() ? std::string("<experiment>") : path;
  if (line > 0) where += fmt::format(":{}", line);
  if (line > 0 && column > 0) where += fmt::format(":{}", column);
  return field.empty() ? fmt::format("{}: {}", where, message)
                       : fmt::format("{}: {}: {}", where, field, message);
}

// A table being read: where it is and how messages call it.
struct Scope {
  const toml::table* table = nullptr;
  std::string path;   // field prefix: "" (top level), "sweep", "variant[1]", "sweep.context"
  std::string title;  // "the top level", "[sweep]", "the 2nd [[variant]]"
  int line = 0;       // the table's first line; 0 for the top level

  std::string field(std::string_view key) const {
    return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
  }
};

// A value read from the file, with where it came from.
template <typename T>
struct Found {
  T value;
  int line = 0;
  std::string field;
};

// Where one arm's config was declared, for messages about it after parsing.
struct ArmSource {
  Scope scope;
  int config_line = 0;        // the key that chose the variant (variant or a knob), or the table
  std::string config_field;   // e.g. "variant[0].warps"
};

class Parser {
 public:
  Parser(std::string path, const ParseInputs& inputs)
      : path_(std::move(path)), compiled_(inputs.compiled_variants), feasibility_(inputs.feasibility) {}

  Experiment parse(const std::string& text) {
    toml::table root;
    try {
      root = toml::parse(text, path_);
    } catch (const toml::parse_error& error) {
      const auto& begin = error.source().begin;
      throw ExperimentError(path_, static_cast<int>(begin.line), static_cast<int>(begin.column),
                            "", fmt::format("TOML syntax: {}", error.description()));
    }
    const Scope top{.table = &root, .path = "", .title = "the top level", .line = 0};
    check_keys(top, kRootKeys);

    Experiment experiment;
    experiment.source_path = path_;
    experiment.source_text = text;
    read_header(top, experiment);
    experiment.sweep = read_sweep(top);
    sweep_ = experiment.sweep;
    experiment.measure = read_measure(top);
    experiment.stats = read_decision(top);
    read_arms(top, experiment);
    if (experiment.baseline.is_kernel()) {
      check_problem_size(experiment);
    } else {
      settle_command_backend(top, experiment);
    }
    check_arms_differ(experiment);
    if (experiment.backend == Backend::kCuda && feasibility_) check_feasibility(experiment);
    return experiment;
  }

 private:
  [[noreturn]] void fail(int line, const std::string& field, const std::string& message) const {
    throw ExperimentError(path_, line, field, message);
  }

  // ---- generic readers --------------------------------------------------------------------

  // Refuses the first unknown key (by line) of the table, with where it belongs if it is a
  // key of another table (TOML puts every key after a [header] into that table, a common
  // slip), or else the closest known key.
  void check_keys(const Scope& scope, const std::vector<std::string_view>& known) const {
    const toml::key* first = nullptr;
    int first_line = std::numeric_limits<int>::max();
    for (const auto& [key, node] : *scope.table) {
      if (contains(known, key.str())) continue;
      const int line = line_of(key.source()) > 0 ? line_of(key.source()) : line_of(node);
      if (line < first_line) {
        first = &key;
        first_line = line;
      }
    }
    if (!first) return;
    const std::string_view key = first->str();
    std::string hint;
    if (const auto home = home_of(key)) {
      hint = fmt::format(" ('{}' belongs in {})", key, *home);
    } else if (const auto close = closest_key(key, known)) {
      hint = fmt::format(" (did you mean '{}'?)", *close);
    }
    fail(first_line, scope.field(key),
         fmt::format("unknown key '{}' in {}{}; known keys: {}", key, scope.title, hint,
                     join(known)));
  }

  // The table a key of the schema belongs in, for keys found in another one.
  static std::optional<std::string_view> home_of(std::string_view key) {
    static const std::pair<const std::vector<std::string_view>*, std::string_view> kHomes[] = {
        {&kRootKeys,
         "the top level: write it before the first [table] header, since every key after a "
         "header belongs to that table"},
        {&kSweepKeys, "[sweep]"},
        {&kMeasureKeys, "[measure]"},
        {&kDecisionKeys, "[decision]"},
        {&kArmKeys, "[baseline] or a [[variant]]"},
    };
    for (const auto& [keys, home] : kHomes) {
      if (contains(*keys, key)) return home;
    }
    return std::nullopt;
  }

  [[noreturn]] void fail_type(const Scope& scope, std::string_view key, const toml::node& node,
                              std::string_view expected) const {
    fail(line_of(node), scope.field(key),
         fmt::format("expected {}, got {}", expected, type_phrase(node)));
  }

  [[noreturn]] void fail_missing(const Scope& scope, std::string_view key,
                                 std::string_view hint) const {
    fail(scope.line, scope.field(key),
         fmt::format("missing key '{}' in {}: {}", key, scope.title, hint));
  }

  std::optional<Found<std::string>> get_string(const Scope& scope, std::string_view key,
                                               std::string_view example) const {
    const toml::node* node = scope.table->get(key);
    if (!node) return std::nullopt;
    const auto* value = node->as_string();
    if (!value) fail_type(scope, key, *node, fmt::format("a string (e.g. {} = {})", key, example));
    return Found<std::string>{value->get(), line_of(*node), scope.field(key)};
  }

  std::optional<Found<std::int64_t>> get_integer(const Scope& scope, std::string_view key,
                                                 std::int64_t min, std::int64_t max) const {
    const toml::node* node = scope.table->get(key);
    if (!node) return std::nullopt;
    const auto* value = node->as_integer();
    if (!value) fail_type(scope, key, *node, "an integer");
    const std::int64_t number = value->get();
    if (number < min || number > max) {
      fail(line_of(*node), scope.field(key),
           fmt::format("{} is out of range: allowed [{}, {}]", number, min, max));
    }
    return Found<std::int64_t>{number, line_of(*node), scope.field(key)};
  }

  std::optional<Found<int>> get_int(const Scope& scope, std::string_view key, int min,
                                    int max) const {
    const auto found = get_integer(scope, key, min, max);
    if (!found) return std::nullopt;
    return Found<int>{static_cast<int>(found->value), found->line, found->field};
  }

  // Integers are accepted where a number is expected (max_minutes = 5).
  std::optional<Found<double>> get_number(const Scope& scope, std::string_view key) const {
    const toml::node* node = scope.table->get(key);
    if (!node) return std::nullopt;
    double number = 0;
    if (const auto* integer = node->as_integer()) {
      number = static_cast<double>(integer->get());
    } else if (const auto* floating = node->as_floating_point()) {
      number = floating->get();
    } else {
      fail_type(scope, key, *node, "a number");
    }
    if (!std::isfinite(number)) {
      fail(line_of(*node), scope.field(key), fmt::format("{} is not a finite number", number));
    }
    return Found<double>{number, line_of(*node), scope.field(key)};
  }

  // A number in a range; `low_open`/`high_open` say whether the ends are excluded.
  std::optional<Found<double>> get_number_in(const Scope& scope, std::string_view key, double low,
                                             bool low_open, double high, bool high_open,
                                             std::string_view why = {}) const {
    auto found = get_number(scope, key);
    if (!found) return std::nullopt;
    const double value = found->value;
    const bool above_low = low_open ? value > low : value >= low;
    const bool below_high = high_open ? value < high : value <= high;
    if (!above_low || !below_high) {
      fail(found->line, found->field,
           fmt::format("{} is out of range: allowed {}{}, {}{}{}", number_text(value),
                       low_open ? "(" : "[", number_text(low), number_text(high),
                       high_open ? ")" : "]", why.empty() ? "" : fmt::format(" ({})", why)));
    }
    return found;
  }

  // A sub-table, or nullopt when absent.
  std::optional<Scope> get_table(const Scope& scope, std::string_view key,
                                 std::string_view hint) const {
    const toml::node* node = scope.table->get(key);
    if (!node) return std::nullopt;
    const auto* table = node->as_table();
    if (!table) fail_type(scope, key, *node, fmt::format("a table ({})", hint));
    return Scope{.table = table, .path = scope.field(key), .title = fmt::format("[{}]", key),
                 .line = line_of(*table)};
  }

  // ---- the top level ----------------------------------------------------------------------

  void read_header(const Scope& top, Experiment& experiment) const {
    const auto name = get_string(top, "name", "\"occupancy\"");
    if (!name) fail_missing(top, "name", "the experiment's name, e.g. name = \"occupancy\"");
    if (!is_valid_experiment_name(name->value)) {
      fail(name->line, name->field,
           fmt::format("'{}' is not a valid name: use letters, digits, '_', '.' and '-' only (it "
                       "names the results folder)",
                       name->value));
    }
    experiment.name = name->value;

    const auto hypothesis = get_string(top, "hypothesis", "\"8 warps hide the latency: +15-25%\"");
    if (!hypothesis || is_blank(hypothesis->value)) {
      fail(hypothesis ? hypothesis->line : 0, "hypothesis",
           "the hypothesis is required: what should change, by how much, and why, e.g. "
           "hypothesis = \"8 warps per SM hide the gather latency: +15-25%\"");
    }
    experiment.hypothesis = hypothesis->value;

    const auto backend = get_string(top, "backend", "\"cuda\"");
    const auto parsed = backend ? parse_backend(backend->value) : Backend::kCuda;
    if (parsed != Backend::kCuda && parsed != Backend::kCpu) {
      fail(backend->line, backend->field,
           fmt::format("unknown backend '{}': allowed \"cuda\" or \"cpu\"", backend->value));
    }
    experiment.backend = *parsed;
  }

  // ---- [sweep] ----------------------------------------------------------------------------

  Sweep read_sweep(const Scope& top) {
    const auto scope = get_table(top, "sweep", "[sweep] with concurrency = [...]");
    if (!scope) {
      fail_missing(top, "sweep",
                   "add a [sweep] table with at least concurrency = [...] (the batch sizes)");
    }
    check_keys(*scope, kSweepKeys);
    sweep_scope_ = scope;
    Sweep sweep;
    if (const auto layout = get_string(*scope, "layout", "\"v4\"")) {
      const auto parsed = parse_layout(layout->value);
      if (!parsed) {
        fail(layout->line, layout->field,
             fmt::format("unknown layout '{}': allowed \"v3\" or \"v4\"", layout->value));
      }
      sweep.layout = *parsed;
    }
    if (const auto heads = get_int(*scope, "heads", 1, kMaxHeads)) sweep.heads = heads->value;
    if (const auto page = get_int(*scope, "page_size", 1, kMaxPageSize)) {
      if ((page->value & (page->value - 1)) != 0) {
        fail(page->line, page->field,
             fmt::format("{} is not a power of two: allowed 1, 2, 4, ..., {}", page->value,
                         kMaxPageSize));
      }
      sweep.page_size = page->value;
    }
    sweep.concurrency = read_concurrency(*scope);
    sweep.context = read_context(*scope);
    return sweep;
  }

  std::vector<int> read_concurrency(const Scope& scope) const {
    const toml::node* node = scope.table->get("concurrency");
    if (!node) {
      fail_missing(scope, "concurrency",
                   "the batch sizes to sweep, ascending, e.g. concurrency = [1, 8, 64]");
    }
    const auto* array = node->as_array();
    if (!array) fail_type(scope, "concurrency", *node, "an array of integers, e.g. [1, 8, 64]");
    if (array->empty()) {
      fail(line_of(*node), scope.field("concurrency"),
           "the list is empty: give at least one batch size, e.g. [1, 8, 64]");
    }
    std::vector<int> values;
    for (std::size_t i = 0; i < array->size(); ++i) {
      const toml::node& element = *array->get(i);
      const std::string field = fmt::format("{}[{}]", scope.field("concurrency"), i);
      const auto* integer = element.as_integer();
      if (!integer) {
        fail(line_of(element), field, fmt::format("expected an integer, got {}",
                                                  type_phrase(element)));
      }
      const std::int64_t value = integer->get();
      if (value < 1 || value > kMaxBatch) {
        fail(line_of(element), field,
             fmt::format("{} is out of range: allowed [1, {}]", value, kMaxBatch));
      }
      if (!values.empty() && value <= values.back()) {
        fail(line_of(element), field,
             fmt::format("{} after {}: list the batch sizes in ascending order, each once",
                         value, values.back()));
      }
      values.push_back(static_cast<int>(value));
    }
    return values;
  }

  ContextSpec read_context(const Scope& sweep) const {
    ContextSpec spec;
    const toml::node* node = sweep.table->get("context");
    if (!node) return spec;
    if (node->is_integer()) {
      spec.length = get_int(sweep, "context", 1, kMaxContextLength)->value;
      return spec;
    }
    const auto* table = node->as_table();
    if (!table) {
      fail_type(sweep, "context", *node,
                "an integer (tokens per request) or a table such as { distribution = "
                "\"uniform\", min = 512, max = 8192 }");
    }
    const Scope scope{.table = table, .path = sweep.field("context"), .title = "sweep.context",
                      .line = line_of(*table)};
    const auto distribution = get_string(scope, "distribution", "\"uniform\"");
    if (!distribution) {
      fail_missing(scope, "distribution", "\"uniform\" or \"lognormal\"");
    }
    const auto context_length = [&](std::string_view key) {
      return get_int(scope, key, 1, kMaxContextLength);
    };
    if (distribution->value == "uniform") {
      check_keys(scope, kUniformKeys);
      spec.kind = ContextSpec::Kind::kUniform;
      const auto min = context_length("min");
      const auto max = context_length("max");
      if (!min) fail_missing(scope, "min", "the shortest context, e.g. min = 512");
      if (!max) fail_missing(scope, "max", "the longest context, e.g. max = 8192");
      spec.min_length = min->value;
      spec.max_length = max->value;
    } else if (distribution->value == "lognormal") {
      check_keys(scope, kLogNormalKeys);
      spec.kind = ContextSpec::Kind::kLogNormal;
      const auto median = context_length("median");
      if (!median) fail_missing(scope, "median", "the median context, e.g. median = 2048");
      const auto sigma = get_number_in(scope, "sigma", 0, true, kMaxSigma, false,
                                       "σ of ln(length); beyond 4 nearly every length is clamped");
      if (!sigma) fail_missing(scope, "sigma", "σ of ln(length), e.g. sigma = 0.8");
      const auto min = context_length("min");
      const auto max = context_length("max");
      spec.length = median->value;
      spec.sigma = sigma->value;
      spec.min_length = min ? min->value : 1;
      spec.max_length = max ? max->value : kMaxContextLength;
      if (median->value < spec.min_length || median->value > spec.max_length) {
        fail(median->line, median->field,
             fmt::format("median {} lies outside [min, max] = [{}, {}]", median->value,
                         spec.min_length, spec.max_length));
      }
    } else {
      fail(distribution->line, distribution->field,
           fmt::format("unknown distribution '{}': allowed \"uniform\" or \"lognormal\" (or a "
                       "plain integer for one length)",
                       distribution->value));
    }
    if (spec.min_length > spec.max_length) {
      const auto max = get_int(scope, "max", 1, kMaxContextLength);
      fail(max ? max->line : scope.line, scope.field("max"),
           fmt::format("max {} is below min {}", spec.max_length, spec.min_length));
    }
    if (const auto seed = get_integer(scope, "seed", 0, kMaxSeed)) {
      spec.seed = static_cast<std::uint64_t>(seed->value);
    }
    return spec;
  }

  // ---- [measure] and [decision] -----------------------------------------------------------

  MeasureSettings read_measure(const Scope& top) const {
    MeasureSettings measure;
    const auto scope = get_table(top, "measure", "[measure] with launches_per_sample etc.");
    if (!scope) return measure;
    check_keys(*scope, kMeasureKeys);
    if (const auto launches = get_int(*scope, "launches_per_sample", 1, kMaxLaunchesPerSample)) {
      measure.launches_per_sample = launches->value;
    }
    if (const auto instances = get_int(*scope, "instances_per_arm", 1, kMaxInstancesPerArm)) {
      measure.instances_per_arm = instances->value;
    }
    if (const auto minutes = get_number_in(*scope, "max_minutes", 0, true, kMaxRunMinutes, false)) {
      measure.max_minutes = minutes->value;
    }
    const auto fraction = get_number_in(*scope, "throttle_fraction", 0, false, 1, false,
                                        "0 never flags a sample as throttled");
    if (fraction) measure.throttle_fraction = fraction->value;
    const auto heat = get_number_in(*scope, "heat_ms", 0, false, kMaxHeatMs, false,
                                    "0 takes every sample without heat");
    if (!heat || heat->value == 0) return measure;
    measure.heat_ms = heat->value;
    // Heat measures each arm at the clock its sustained load holds, which at a power cap is
    // below the run's peak reading: excluding such samples would exclude them all.
    if (fraction && fraction->value > 0) {
      fail(fraction->line, fraction->field,
           fmt::format("{} excludes the samples heat_ms = {} is for: with heat a lowered clock "
                       "is what is measured, not a disturbance; remove throttle_fraction (it "
                       "then defaults to 0) or set it to 0",
                       number_text(fraction->value), number_text(heat->value)));
    }
    measure.throttle_fraction = default_throttle_fraction(measure.heat_ms);
    return measure;
  }

  Settings read_decision(const Scope& top) {
    Settings settings;
    const auto scope = get_table(top, "decision", "[decision] with alpha, min_effect_pct etc.");
    if (!scope) return settings;
    decision_scope_ = *scope;
    if (const toml::node* resamples = scope->table->get("resamples")) {
      fail(line_of(*resamples), scope->field("resamples"),
           "resamples is no longer used: intervals and tests come from Student's t on the "
           "trimmed mean of paired log ratios, with nothing resampled; remove the key");
    }
    check_keys(*scope, kDecisionKeys);
    if (const auto v = get_number_in(*scope, "min_effect_pct", 0, false, kMaxMinEffectPct, true)) {
      settings.min_effect_pct = v->value;
    }
    if (const auto v = get_number_in(*scope, "alpha", 0, true, kMaxAlpha, false,
                                     "above 0.5 a test calls noise a change more often than "
                                     "not")) {
      settings.alpha = v->value;
    }
    if (const auto v = get_int(*scope, "min_rounds", kMinRounds, kMaxRounds)) {
      settings.min_rounds = v->value;
    }
    if (const auto v = get_int(*scope, "max_rounds", 1, kMaxRounds)) {
      settings.max_rounds = v->value;
    }
    if (const auto v = get_number_in(*scope, "time_budget_s", 0, true, kMaxTimeBudgetS, false)) {
      settings.time_budget_s = v->value;
    }
    if (const auto v = get_integer(*scope, "seed", 0, kMaxSeed)) {
      settings.seed = static_cast<std::uint64_t>(v->value);
    }
    if (const auto v = get_string(*scope, "correction", "\"holm\"")) {
      if (v->value == "holm") {
        settings.correction = Correction::kHolm;
      } else if (v->value == "bh") {
        settings.correction = Correction::kBenjaminiHochberg;
      } else {
        fail(v->line, v->field,
             fmt::format("unknown correction '{}': allowed \"holm\" (family-wise error rate) or "
                         "\"bh\" (Benjamini-Hochberg, false discovery rate)",
                         v->value));
      }
    }
    if (const auto v = get_string(*scope, "family", "\"each_variant\"")) {
      if (v->value == "each_variant") {
        settings.family = CorrectionFamily::kEachVariant;
      } else if (v->value == "whole_sweep") {
        settings.family = CorrectionFamily::kWholeSweep;
      } else {
        fail(v->line, v->field,
             fmt::format("unknown family '{}': allowed \"each_variant\" or \"whole_sweep\"",
                         v->value));
      }
    }
    // The cross-field rules (max_rounds ≥ min_rounds, ...) are ab::validate's, so that the lab
    // and the statistics never disagree on what is valid. Its message names the setting; the
    // first decision key it names is the field.
    try {
      validate(settings);
    } catch (const std::invalid_argument& error) {
      const std::string message = error.what();
      std::size_t first = std::string::npos;
      std::string_view named;
      for (const auto key : kDecisionKeys) {
        const auto at = message.find(key);
        if (at < first) {
          first = at;
          named = key;
        }
      }
      const toml::node* node = named.empty() ? nullptr : scope->table->get(named);
      // Say what the values were: a default the user never wrote may be the culprit.
      std::vector<std::string> values;
      for (const auto key : kDecisionKeys) {
        if (message.find(key) == std::string::npos) continue;
        const auto value = numeric_setting(settings, key);
        if (!value) continue;
        values.push_back(fmt::format("{} = {}{}", key, *value,
                                     scope->table->get(key) ? "" : " (the default)"));
      }
      fail(node ? line_of(*node) : scope->line, named.empty() ? scope->path : scope->field(named),
           values.empty() ? message : fmt::format("{}; here {}", message, join(values)));
    }
    return settings;
  }

  static std::optional<std::string> numeric_setting(const Settings& settings,
                                                    std::string_view key) {
    if (key == "min_effect_pct") return number_text(settings.min_effect_pct);
    if (key == "alpha") return number_text(settings.alpha);
    if (key == "min_rounds") return std::to_string(settings.min_rounds);
    if (key == "max_rounds") return std::to_string(settings.max_rounds);
    if (key == "time_budget_s") return number_text(settings.time_budget_s);
    return std::nullopt;
  }

  // ---- arms -------------------------------------------------------------------------------

  void read_arms(const Scope& top, Experiment& experiment) {
    const toml::node* baseline_node = top.table->get("baseline");
    if (!baseline_node) {
      fail_missing(top, "baseline",
                   "add a [baseline] table: the arm every variant is compared with, e.g. "
                   "[baseline] variant = \"h16_t16_w4_s2\"");
    }
    if (baseline_node->is_array()) {
      fail(line_of(*baseline_node), "baseline",
           "write [baseline] with one pair of brackets: an experiment has one baseline");
    }
    const auto baseline_scope = get_table(top, "baseline", "[baseline]");
    experiment.baseline = read_arm(*baseline_scope, experiment.backend, nullptr);
    sources_.push_back(last_source_);

    const toml::node* variants_node = top.table->get("variant");
    if (!variants_node) {
      fail_missing(top, "variant",
                   "add at least one [[variant]] table: the arms compared with the baseline");
    }
    const auto* array = variants_node->as_array();
    if (!array || !array->is_array_of_tables()) {
      fail(line_of(*variants_node), "variant",
           "write each variant as a [[variant]] table (two pairs of brackets), one per arm");
    }
    if (array->empty()) {
      fail(line_of(*variants_node), "variant", "no variant: add at least one [[variant]] table");
    }
    for (std::size_t i = 0; i < array->size(); ++i) {
      const auto* table = array->get(i)->as_table();
      std::string title = fmt::format("the {} [[variant]]", ordinal(static_cast<int>(i) + 1));
      if (const auto name = table->get_as<std::string>("name")) {
        title += fmt::format(" ('{}')", name->get());
      }
      const Scope scope{.table = table, .path = fmt::format("variant[{}]", i),
                        .title = std::move(title), .line = line_of(*table)};
      experiment.variants.push_back(read_arm(scope, experiment.backend, &experiment.baseline));
      sources_.push_back(last_source_);
    }
    check_names(experiment);
  }

  // The first key of `keys` present in the table, if any.
  static std::optional<std::string_view> first_present(const Scope& scope,
                                                       const std::vector<std::string_view>& keys) {
    std::optional<std::string_view> first;
    int first_line = std::numeric_limits<int>::max();
    for (const auto key : keys) {
      if (const toml::node* node = scope.table->get(key); node && line_of(*node) < first_line) {
        first = key;
        first_line = line_of(*node);
      }
    }
    return first;
  }

  // One arm. `baseline` is null when reading the baseline itself; a variant takes from it
  // whatever it does not set.
  Arm read_arm(const Scope& scope, Backend backend, const Arm* baseline) {
    check_keys(scope, kArmKeys);
    const bool is_baseline = baseline == nullptr;
    last_source_ = ArmSource{.scope = scope, .config_line = scope.line, .config_field = scope.path};

    Arm arm;
    if (const auto name = get_string(scope, "name", "\"8 warps\"")) {
      if (name->value.empty() || utf8_length(name->value) > kMaxNameChars ||
          has_control_characters(name->value)) {
        fail(name->line, name->field,
             fmt::format("'{}' is not a valid arm name: 1 to {} printable characters",
                         name->value, kMaxNameChars));
      }
      arm.name = name->value;
    } else if (is_baseline) {
      arm.name = "baseline";
    } else {
      fail_missing(scope, "name", "how the report calls this arm, e.g. name = \"8 warps\"");
    }
    if (const auto prediction = get_number_in(
            scope, "prediction", kMinPredictionPct, true, kMaxPredictionPct, false,
            "the expected change of throughput in %")) {
      if (is_baseline) {
        fail(prediction->line, prediction->field,
             "the baseline takes no prediction: predictions are changes relative to it");
      }
      arm.prediction_pct = prediction->value;
    }

    const auto command_key = first_present(scope, kCommandArmKeys);
    const auto kernel_key = first_present(scope, kKernelArmKeys);
    if (command_key && kernel_key) {
      fail(line_of(*scope.table->get(*kernel_key)), scope.field(*kernel_key),
           fmt::format("{} mixes a command-arm key ('{}') with a kernel-arm key ('{}'): an arm "
                       "runs either a kernel (variant, knobs, split, threads) or a command "
                       "(command, env, metric, better, timeout_s)",
                       scope.title, *command_key, *kernel_key));
    }
    bool command_arm = command_key.has_value();
    if (is_baseline && !command_key && !kernel_key) {
      fail(scope.line, scope.path,
           backend == Backend::kCpu
               ? "the baseline names no config: on the cpu backend give threads = N (0 = every "
                 "hardware thread), or command/metric/better for a command arm"
               : "the baseline names no config: give variant = \"h16_t16_w4_s2\" (or all of "
                 "block_h, block_t, warps, stages) and split, or command/metric/better for a "
                 "command arm");
    }
    if (!is_baseline && !command_key && !kernel_key) command_arm = !baseline->is_kernel();
    if (!is_baseline && command_arm == baseline->is_kernel()) {
      const std::string key(command_arm ? *command_key : *kernel_key);
      fail(line_of(*scope.table->get(key)), scope.field(key),
           fmt::format("{} is a {} arm but the baseline is a {} arm: every variant is compared "
                       "with the baseline on one metric, so all arms run kernels or all run "
                       "commands",
                       scope.title, command_arm ? "command" : "kernel",
                       command_arm ? "kernel" : "command"));
    }

    const auto* base_kernel = baseline ? std::get_if<KernelArm>(&baseline->config) : nullptr;
    const auto* base_command = baseline ? std::get_if<CommandArm>(&baseline->config) : nullptr;
    if (command_arm) {
      arm.config = read_command_arm(scope, base_command);
      return arm;
    }
    // A Python arm names its callable or its params, or says nothing beside a Python baseline.
    const bool base_is_python = base_kernel && !base_kernel->python.empty();
    if (scope.table->get("python") || scope.table->get("params") ||
        (base_is_python && !kernel_key)) {
      arm.config = read_python_arm(scope, base_kernel);
      return arm;
    }
    // A kernel arm beside a Python baseline inherits nothing from it.
    if (base_is_python) base_kernel = nullptr;
    // An arm's build is its own: a variant does not inherit the baseline's (the usual A/B of a
    // change is the previous build's baseline against this build's variant).
    const std::string build = read_build(scope);
    KernelArm kernel = backend == Backend::kCpu ? read_cpu_arm(scope, base_kernel)
                                                : read_cuda_arm(scope, base_kernel, !build.empty());
    kernel.build = build;
    arm.config = std::move(kernel);
    return arm;
  }

  // A Python arm: `python` = "module:function", or the baseline's callable, whose params it
  // then starts from; `params`, a table of the callable's parameters, over those.
  KernelArm read_python_arm(const Scope& scope, const KernelArm* base) {
    if (const auto key = first_present(scope, kNotPythonArmKeys)) {
      fail(line_of(*scope.table->get(*key)), scope.field(*key),
           fmt::format("{} is a Python arm (python = \"module:function\", params), which runs "
                       "its callable: '{}' chooses an mlalab kernel; remove it, or the Python "
                       "keys",
                       scope.title, *key));
    }
    KernelArm arm;
    nlohmann::json params = nlohmann::json::object();
    if (const auto python = get_string(scope, "python", "\"mlalab.triton_decode:arm\"")) {
      static const std::regex kTarget(R"([A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*)"
                                      R"(:[A-Za-z_][A-Za-z0-9_]*)");
      if (!std::regex_match(python->value, kTarget)) {
        fail(python->line, python->field,
             fmt::format("'{}' is not \"module:function\": a dotted module the worker's Python "
                         "can import and a function in it, e.g. \"mlalab.triton_decode:arm\"",
                         python->value));
      }
      arm.python = python->value;
      last_source_.config_line = python->line;
      last_source_.config_field = python->field;
    } else if (base && !base->python.empty()) {
      arm.python = base->python;
      params = nlohmann::json::parse(base->params);
    } else {
      fail(line_of(*scope.table->get("params")), scope.field("params"),
           "params are a Python arm's: give python = \"module:function\" too");
    }
    if (const toml::node* node = scope.table->get("params")) {
      const toml::table* table = node->as_table();
      if (table == nullptr) {
        fail(line_of(*node), scope.field("params"),
             "must be a table of the callable's parameters, e.g. params = { block_n = 16, "
             "num_warps = 8 }");
      }
      std::ostringstream text;
      text << toml::json_formatter{*table};
      const nlohmann::json given = nlohmann::json::parse(text.str());
      for (const auto& [key, value] : given.items()) params[key] = value;
    }
    arm.params = params.dump();
    return arm;
  }

  // `build`: another mlalab binary that runs the arm (ab/worker.h), relative to the
  // experiment file like a tuning table; empty when the key is absent (this build).
  std::string read_build(const Scope& scope) const {
    const auto build = get_string(scope, "build", "\"../build-prev/bin/mlalab\"");
    if (!build) return {};
    const std::filesystem::path path = beside_this_file(build->value);
    std::error_code error;
    if (!std::filesystem::is_regular_file(path, error) || access(path.c_str(), X_OK) != 0) {
      fail(build->line, build->field,
           fmt::format("'{}' ({}) is not an executable file: build names another mlalab binary, "
                       "relative to this file, e.g. a build of the previous commit",
                       build->value, path.string()));
    }
    return path.string();
  }

  // A path the file names (a tuning table, another build): relative to the file's folder.
  std::filesystem::path beside_this_file(const std::string& given) const {
    const std::filesystem::path as_given(given);
    if (as_given.is_absolute()) return as_given;
    return (std::filesystem::path(path_).parent_path() / as_given).lexically_normal();
  }

  std::string compiled_list() const {
    return compiled_.empty() ? "none" : join(compiled_);
  }

  bool is_compiled(const std::string& name) const {
    return std::find(compiled_.begin(), compiled_.end(), name) != compiled_.end();
  }

  // " (did you mean 'h16_t16_w4_s4'?)" for a name a typo away from a compiled one, else "".
  std::string compiled_hint(const std::string& name) const {
    const auto nearest = nearest_word(name, compiled_);
    return nearest ? fmt::format(" (did you mean '{}'?)", *nearest) : std::string();
  }

  // `other_build`: the arm runs in another build, whose variants this one cannot list; that
  // build's worker refuses a variant it lacks when the arm is prepared.
  KernelArm read_cuda_arm(const Scope& scope, const KernelArm* base, bool other_build) {
    if (const toml::node* threads = scope.table->get("threads")) {
      fail(line_of(*threads), scope.field("threads"),
           "threads is the cpu backend's knob, and this experiment's backend is cuda (set "
           "backend = \"cpu\" at the top level to run the CPU kernel)");
    }
    if (const auto table = get_string(scope, "table", "\"tuning-v4-h16-p64.json\"")) {
      return read_tuned_arm(scope, *table);
    }
    // A tuned baseline has no knobs to inherit.
    if (base && !base->table.empty()) base = nullptr;
    KernelArm arm;
    const auto variant = get_string(scope, "variant", "\"h16_t16_w4_s2\"");
    const auto knob_key = first_present(scope, kKnobKeys);
    if (variant && knob_key) {
      fail(line_of(*scope.table->get(*knob_key)), scope.field(*knob_key),
           fmt::format("give either variant = \"...\" or the knobs (block_h, block_t, warps, "
                       "stages), not both: '{}' would override the variant named on line {}",
                       *knob_key, variant->line));
    }
    if (variant) {
      if (variant->value == kCpuVariant) {
        fail(variant->line, variant->field,
             "variant \"cpu\" is the CPU backend: set backend = \"cpu\" at the top level");
      }
      if (!other_build && !is_compiled(variant->value)) {
        const bool well_formed = parse_variant_name(variant->value).has_value();
        fail(variant->line, variant->field,
             well_formed
                 ? fmt::format("'{}' is not compiled into this build{} (compiled: {}); "
                               "rebuild with MLALAB_VARIANTS selecting it",
                               variant->value, compiled_hint(variant->value), compiled_list())
                 : fmt::format("'{}' is not a kernel variant name{} (the form is "
                               "h<block_h>_t<block_t>_w<warps>_s<stages>); compiled: {}",
                               variant->value, compiled_hint(variant->value),
                               compiled_list()));
      }
      arm.variant = variant->value;
      last_source_.config_line = variant->line;
      last_source_.config_field = variant->field;
    } else if (knob_key) {
      arm.variant = variant_from_knobs(scope, base, other_build);
    } else if (base) {
      arm.variant = base->variant;
    }

    if (const auto split = get_string(scope, "split", "\"target_ctas:512\"")) {
      std::string error;
      const auto policy = parse_split_policy(split->value, &error);
      if (!policy) fail(split->line, split->field, error);
      arm.split = *policy;
    } else if (base) {
      arm.split = base->split;
    }
    if (arm.variant.empty()) {
      fail(scope.line, scope.path,
           fmt::format("{} names no variant to run: give variant = \"h16_t16_w4_s2\" (or the "
                       "knobs) or table = \"...\"",
                       scope.title));
    }
    return arm;
  }

  // A tuned arm: the table alone (it chooses variant and split per point), readable, and made
  // for this sweep's problem. Whether it matches this GPU and build is the runner's question.
  KernelArm read_tuned_arm(const Scope& scope, const Found<std::string>& table) {
    if (const auto key = first_present(scope, {"variant", "block_h", "block_t", "warps",
                                               "stages", "split"})) {
      fail(line_of(*scope.table->get(*key)), scope.field(*key),
           fmt::format("a tuned arm (table = \"...\", line {}) takes its variant and split from "
                       "the table at each point: remove '{}'",
                       table.line, *key));
    }
    KernelArm arm;
    arm.table = beside_this_file(table.value).string();
    dispatch::TuningTable tuned;
    try {
      tuned = dispatch::read_table(arm.table);
    } catch (const dispatch::TableError& error) {
      fail(table.line, table.field, error.what());
    }
    const dispatch::TableIdentity& identity = tuned.identity;
    if (sweep_ && (identity.layout != sweep_->layout || identity.num_heads != sweep_->heads ||
                   identity.page_size != sweep_->page_size)) {
      fail(table.line, table.field,
           fmt::format("the table was tuned for layout {}, {} heads, page {}; the sweep is {}, {} "
                       "heads, page {}",
                       name_of(identity.layout), identity.num_heads, identity.page_size,
                       name_of(sweep_->layout), sweep_->heads, sweep_->page_size));
    }
    last_source_.config_line = table.line;
    last_source_.config_field = table.field;
    return arm;
  }

  // The variant named by knobs: the baseline's shape (none for the baseline itself) with the
  // knobs this arm sets.
  std::string variant_from_knobs(const Scope& scope, const KernelArm* base, bool other_build) {
    std::optional<VariantShape> shape;
    if (base) shape = parse_variant_name(base->variant);
    std::vector<std::string> given;
    std::vector<std::string> missing;
    VariantShape derived = shape.value_or(VariantShape{});
    const std::pair<std::string_view, int VariantShape::*> knobs[] = {
        {"block_h", &VariantShape::block_h},
        {"block_t", &VariantShape::block_t},
        {"warps", &VariantShape::warps},
        {"stages", &VariantShape::stages}};
    int first_line = std::numeric_limits<int>::max();
    std::string first_field;
    for (const auto& [key, member] : knobs) {
      if (const auto value = get_int(scope, key, 1, kMaxKnobValue)) {
        derived.*member = value->value;
        given.push_back(fmt::format("{} = {}", key, value->value));
        if (value->line < first_line) {
          first_line = value->line;
          first_field = value->field;
        }
      } else {
        missing.emplace_back(key);
      }
    }
    last_source_.config_line = first_line;
    last_source_.config_field = first_field;
    if (!base && !missing.empty()) {
      fail(first_line, first_field,
           fmt::format("the baseline sets {} but not {}: a baseline given by knobs needs all "
                       "four (it has nothing to inherit from), or use variant = \"...\"",
                       join(given), join(missing)));
    }
    const std::string name = variant_name(derived);
    if (!other_build && !is_compiled(name)) {
      const std::string origin =
          base ? fmt::format("{} applied to the baseline {} gives", join(given), base->variant)
               : fmt::format("{} is", join(given));
      fail(first_line, first_field,
           fmt::format("{} {}, which is not compiled into this build (compiled: {}); rebuild "
                       "with MLALAB_VARIANTS selecting it",
                       origin, name, compiled_list()));
    }
    return name;
  }

  KernelArm read_cpu_arm(const Scope& scope, const KernelArm* base) {
    if (const auto key =
            first_present(scope, {"block_h", "block_t", "warps", "stages", "split", "table"})) {
      fail(line_of(*scope.table->get(*key)), scope.field(*key),
           fmt::format("{} is a CUDA kernel knob; the cpu backend's only knob is threads (set "
                       "backend = \"cuda\" at the top level to run CUDA kernels)",
                       *key));
    }
    if (const auto variant = get_string(scope, "variant", "\"cpu\"")) {
      if (variant->value != kCpuVariant) {
        fail(variant->line, variant->field,
             fmt::format("the cpu backend runs variant = \"cpu\" only; '{}' is {} (set backend "
                         "= \"cuda\" at the top level to run CUDA kernels)",
                         variant->value,
                         parse_variant_name(variant->value) ? "a CUDA kernel" : "unknown"));
      }
    }
    KernelArm arm;
    arm.variant = kCpuVariant;
    arm.cpu_threads = base ? base->cpu_threads : kDefaultCpuThreads;
    if (const auto threads = get_int(scope, "threads", 0, kMaxCpuThreads)) {
      arm.cpu_threads = threads->value;
      last_source_.config_line = threads->line;
      last_source_.config_field = threads->field;
    }
    return arm;
  }

  CommandArm read_command_arm(const Scope& scope, const CommandArm* base) {
    CommandArm arm = base ? *base : CommandArm{};
    const std::string_view missing_hint =
        "a command arm's baseline needs command, metric and better (variants take them from "
        "it)";
    if (const auto command = get_string(scope, "command", "\"python3 bench.py\"")) {
      if (is_blank(command->value)) fail(command->line, command->field, "the command is empty");
      arm.command = command->value;
      last_source_.config_line = command->line;
      last_source_.config_field = command->field;
    } else if (!base) {
      fail_missing(scope, "command", missing_hint);
    }

    if (const toml::node* node = scope.table->get("env")) {
      const auto* table = node->as_table();
      if (!table) fail_type(scope, "env", *node, "a table, e.g. env = { VLLM_MLA_WARPS = \"8\" }");
      for (const auto& [key, value] : *table) {
        const std::string field = fmt::format("{}.{}", scope.field("env"), key.str());
        if (!is_valid_env_name(key.str())) {
          fail(line_of(value), field,
               fmt::format("'{}' is not an environment variable name ([A-Za-z_][A-Za-z0-9_]*)",
                           key.str()));
        }
        if (key.str() == kConcurrencyEnvVar) {
          fail(line_of(value), field,
               fmt::format("{} is set by mlalab to each sweep point's concurrency",
                           kConcurrencyEnvVar));
        }
        const auto* text = value.as_string();
        if (!text) {
          fail(line_of(value), field,
               fmt::format("expected a string (write \"8\" for 8), got {}", type_phrase(value)));
        }
        arm.env[std::string(key.str())] = text->get();
      }
    }

    if (const auto metric = get_string(scope, "metric", "'throughput: ([0-9.]+) tok/s'")) {
      try {
        const std::regex regex(metric->value, std::regex::ECMAScript);
        if (regex.mark_count() < 1) {
          fail(metric->line, metric->field,
               fmt::format("'{}' has no capture group: put the number in parentheses, e.g. "
                           "'throughput: ([0-9.]+) tok/s'",
                           metric->value));
        }
      } catch (const std::regex_error& error) {
        fail(metric->line, metric->field,
             fmt::format("'{}' is not a valid regular expression (ECMAScript): {}", metric->value,
                         error.what()));
      }
      arm.metric_regex = metric->value;
    } else if (!base) {
      fail_missing(scope, "metric", missing_hint);
    }

    if (const auto better = get_string(scope, "better", "\"higher\"")) {
      Direction direction = Direction::kHigherIsBetter;
      if (better->value == "lower") {
        direction = Direction::kLowerIsBetter;
      } else if (better->value != "higher") {
        fail(better->line, better->field,
             fmt::format("unknown direction '{}': allowed \"higher\" (a throughput) or "
                         "\"lower\" (a latency)",
                         better->value));
      }
      if (base && direction != base->direction) {
        fail(better->line, better->field,
             fmt::format("better = \"{}\" but the baseline's is \"{}\": every arm is compared "
                         "with the baseline on one metric",
                         better->value,
                         base->direction == Direction::kHigherIsBetter ? "higher" : "lower"));
      }
      arm.direction = direction;
    } else if (!base) {
      fail_missing(scope, "better",
                   "which way the metric improves, better = \"higher\" (a throughput) or "
                   "\"lower\" (a latency)");
    }

    if (const auto timeout = get_number_in(scope, "timeout_s", 0, true, kMaxTimeoutS, false)) {
      arm.timeout_s = timeout->value;
    }
    return arm;
  }

  // How messages name arm `index` of sources_ (0: the baseline) without its name.
  static std::string arm_place(std::size_t index) {
    return index == 0 ? std::string("[baseline]")
                      : fmt::format("the {} [[variant]]", ordinal(static_cast<int>(index)));
  }

  void check_names(const Experiment& experiment) const {
    std::map<std::string, std::size_t> seen;  // name → index into sources_
    const auto check = [&](const Arm& arm, std::size_t index) {
      const auto [at, inserted] = seen.emplace(arm.name, index);
      if (inserted) return;
      const ArmSource& source = sources_[index];
      const toml::node* node = source.scope.table->get("name");
      fail(node ? line_of(*node) : source.scope.line, source.scope.field("name"),
           fmt::format("the name '{}' is already used by {} (line {}): arm names must be "
                       "unique",
                       arm.name, arm_place(at->second), sources_[at->second].scope.line));
    };
    check(experiment.baseline, 0);
    for (std::size_t i = 0; i < experiment.variants.size(); ++i) {
      check(experiment.variants[i], i + 1);
    }
  }

  // A variant with the baseline's config is an A/A arm, which the lab runs anyway; two
  // variants with one config are one arm measured twice. Either is almost always a typo.
  void check_arms_differ(const Experiment& experiment) const {
    std::vector<const Arm*> arms = {&experiment.baseline};
    for (const auto& variant : experiment.variants) arms.push_back(&variant);
    for (std::size_t i = 1; i < arms.size(); ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (arms[i]->config != arms[j]->config) continue;
        const ArmSource& source = sources_[i];
        const std::string other = j == 0 ? std::string("the baseline")
                                         : fmt::format("'{}'", arms[j]->name);
        fail(source.scope.line, source.scope.path,
             fmt::format("'{}' has the same config as {} ({}){}; change a knob or remove the "
                         "arm",
                         arms[i]->name, other, arm_config_text(*arms[i]),
                         j == 0 ? ": the A/A comparison is built in (the baseline runs twice)"
                                : ""));
      }
    }
  }

  // Kernel arms build each point's problem in memory (and on the GPU): refuse, as bench does,
  // a sweep whose largest point could not be allocated, before anything runs. The largest
  // point is the last (concurrencies ascend), and its requests include every smaller point's.
  void check_problem_size(const Experiment& experiment) const {
    const Sweep& sweep = experiment.sweep;
    const int concurrency = sweep.concurrency.back();
    const std::vector<int> lengths = sample_context_lengths(sweep.context, concurrency);
    const std::size_t tokens = std::accumulate(lengths.begin(), lengths.end(), std::size_t{0});
    const std::string shape =
        sweep.context.kind == ContextSpec::Kind::kFixed
            ? fmt::format("concurrency {} × context {}", concurrency, sweep.context.length)
            : fmt::format("concurrency {}, {} tokens in all", concurrency, tokens);
    if (const auto error = bench::check_kv_cache_size(sweep.layout, tokens, "sweep", shape)) {
      const toml::node* node = sweep_scope_ ? sweep_scope_->table->get("concurrency") : nullptr;
      fail(node ? line_of(*node) : 0, "sweep.concurrency",
           fmt::format("{}: allowed {}, at the largest sweep point", error->value,
                       error->allowed));
    }
  }

  // Command arms run as shell commands, on whatever they use: no kernel backend runs, and a
  // backend key would claim one that did not (the report and the fingerprint say what ran).
  void settle_command_backend(const Scope& top, Experiment& experiment) const {
    if (const toml::node* backend = top.table->get("backend")) {
      fail(line_of(*backend), "backend",
           "backend chooses where kernel arms run, and this experiment's arms are commands, "
           "which run as shell commands: remove the key");
    }
    experiment.backend = Backend::kNone;
  }

  void check_feasibility(const Experiment& experiment) const {
    std::map<std::string, std::optional<std::string>> verdicts;  // per variant name
    const auto check = [&](const Arm& arm, const ArmSource& source) {
      const auto* kernel = std::get_if<KernelArm>(&arm.config);
      // Another build judges its own arms, and the Python worker its callables.
      if (!kernel || !worker_of(*kernel).empty()) return;
      auto [at, inserted] = verdicts.try_emplace(kernel->variant);
      if (inserted) {
        const auto shape = parse_variant_name(kernel->variant);
        if (!shape) return;  // names come from the registry; a malformed one cannot be judged
        at->second = feasibility_(*shape, experiment.sweep.layout);
      }
      if (!at->second) return;
      fail(source.config_line, source.config_field,
           fmt::format("{} (arm '{}') is infeasible at layout {}: {}", kernel->variant, arm.name,
                       name_of(experiment.sweep.layout), *at->second));
    };
    check(experiment.baseline, sources_[0]);
    for (std::size_t i = 0; i < experiment.variants.size(); ++i) {
      check(experiment.variants[i], sources_[i + 1]);
    }
  }

  std::string path_;
  std::vector<std::string> compiled_;
  FeasibilityCheck feasibility_;
  std::optional<Scope> decision_scope_;
  std::optional<Scope> sweep_scope_;
  std::optional<Sweep> sweep_;  // read before the arms, which a tuning table must match
  std::vector<ArmSource> sources_;  // the baseline's, then each variant's
  ArmSource last_source_;
};

}  // namespace

ExperimentError::ExperimentError(std::string path, int line, std::string field,
                                 const std::string& message)
    : ExperimentError(std::move(path), line, 0, std::move(field), message) {}

ExperimentError::ExperimentError(std::string path, int line, int column, std::string field,
                                 const std::string& message)
    : std::runtime_error(what_text(path, line, column, field, message)),
      path_(std::move(path)),
      line_(line),
      column_(column),
      field_(std::move(field)) {}

std::string layout_text(const Sweep& sweep) {
  const LayoutDims dims = dims_of(sweep.layout);
  return fmt::format("{} (rows of d_qk {}, d_v {})", name_of(sweep.layout), dims.d_qk, dims.d_v);
}

std::string arm_config_text(const Arm& arm) {
  if (const auto* kernel = std::get_if<KernelArm>(&arm.config)) {
    if (!kernel->python.empty()) return fmt::format("python {} {}", kernel->python, kernel->params);
    const std::string in_build = kernel->build.empty() ? "" : " in " + kernel->build;
    if (kernel->variant == kCpuVariant) {
      return (kernel->cpu_threads == 0 ? std::string("cpu threads=all")
                                       : fmt::format("cpu threads={}", kernel->cpu_threads)) +
             in_build;
    }
    if (!kernel->table.empty()) return "tuned by " + kernel->table + in_build;
    return fmt::format("{} {}{}", kernel->variant, kernel->split.to_string(), in_build);
  }
  const auto& command = std::get<CommandArm>(arm.config);
  std::string text;
  for (const auto& [name, value] : command.env) {
    text += fmt::format("{}={} ", name, shell_word(value));
  }
  return text + command.command;
}

Experiment parse_experiment_text(const std::string& text, const std::string& path_for_errors,
                                 const ParseInputs& inputs) {
  return Parser(path_for_errors, inputs).parse(text);
}

}  // namespace mlalab::ab
