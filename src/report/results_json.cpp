#include "report/results_json.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <limits>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <variant>
#include <vector>

#include "ab/stats.h"
#include "report/format.h"

namespace mlalab::report {
namespace {

using Json = nlohmann::ordered_json;

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr auto kReplaceInvalidUtf8 = nlohmann::json::error_handler_t::replace;

// What the figures mean and how they derive, written into every file: the numbers of the
// statistics from stats.h, so that the text cannot drift from them.
std::string schema_notes() {
  return fmt::format(
      "Every figure of report.md derives from this file. samples[].value is the metric of one "
      "sample (kernel arms: throughput in sequences/s = batch / time per decode step, higher is "
      "better; command arms: the captured metric in the direction of analysis.direction); samples "
      "with throttled = true are excluded from every statistic. 'point' and 'arm' index 'points' "
      "and 'arms'. Per point and arm, a median is that of the non-throttled values (the mean of "
      "the middle two for an even count): analysis.noise[].baseline_median and "
      "variants[].points[].variant_median. A comparison (a variant against role baseline; the A/A "
      "comparison is role baseline_repeat against role baseline) takes d = ln(treatment / control) "
      "in each round in which both arms have a sample, latencies first inverted to throughputs. "
      "Its estimate is the {trim_pct:g}% trimmed mean of the n values d (g = floor({trim:g} n) cut "
      "from each end), standard_error_log the winsorized standard deviation / ({kept:g} sqrt(n)), "
      "and its interval the estimate +/- t(1 - alpha/2, degrees_of_freedom = n - 2g - 1) * "
      "standard_error_log; change_pct, lower_pct and upper_pct are these as % changes, (exp(x) - "
      "1) * 100. Nothing is resampled. A point is analysed at its looks (analysis.looks: after "
      "min_rounds, twice as many, ... and max_rounds rounds, each with alpha_share, its share of "
      "alpha from an O'Brien-Fleming-type spending function; a point that ended between looks is "
      "analysed at its last round too, with the next look's share). threshold_pct is T = "
      "experiment.stats.min_effect_pct at every point. p_value tests |change| <= T, p_within tests "
      "|change| >= T (two one-sided tests), each the smallest over the point's looks of p / "
      "alpha_share, capped at 1; looks counts them; change and interval are those of the last "
      "look, every paired round of the point. p_adjusted is p_value after "
      "experiment.stats.correction over experiment.stats.family. The A/A check: noise[].p_check is "
      "the A/A comparison's look-adjusted p_value, and the point is flagged when it is <= alpha "
      "with at least min_rounds paired rounds: A' differs from A beyond T, which the design should "
      "have made impossible. noise[].band_pct = max(|lower|, |upper|) of the A/A interval, which a "
      "dip between two concurrencies must exceed. Point verdicts, first match wins: WITHHELD at a "
      "flagged point; FASTER or SLOWER (the sign of the change) when p_adjusted <= alpha; "
      "WITHIN_NOISE when p_within <= alpha and the interval contains 0; SMALL_CHANGE when p_within "
      "<= alpha and it does not (a real change below T); else AMBIGUOUS, also with fewer than "
      "min_rounds paired rounds. rounds_to_settle (AMBIGUOUS only) is the paired rounds in all "
      "that would settle the point with {power_pct:g}% power were the estimate where it is; null "
      "when none are expected to. mde_pct is the minimum detectable effect: the smallest change "
      "that the point's rounds would have found FASTER or SLOWER with {power_pct:g}% power at its "
      "noise (standard_error_log * sqrt(paired_rounds) per round), tested at alpha * (the last "
      "look's share) / (the correction's family size). A variant is MIXED when FASTER somewhere "
      "and SLOWER elsewhere, REJECTED when only SLOWER, ACCEPTED when only FASTER, else "
      "INCONCLUSIVE. Files before schema 3 hold the analysis of earlier statistics (a bootstrap of "
      "medians, a threshold of max(A/A band, min_effect_pct)); the analysis of files before schema "
      "3 is not read: their samples can be analysed again. Non-finite numbers are null (a missing "
      "median or change: NaN; an unbounded interval end: -inf below, +inf above; an unknown "
      "standard error or MDE: +inf), and so is every field that is unknown or does not apply: a "
      "GPU's fields on the cpu backend, a kernel arm's split on the cpu backend and its "
      "cpu_threads on the cuda backend, the kernel sweep settings of command arms, a sample's "
      "time_us for commands and its sm_clock_mhz and power_w where no clock was read. "
      "samples[].power_w is the board's draw in watts (nvidia-smi power.draw, averaged over the "
      "last second) read with the clock after the sample's round, so the arms of a round share "
      "it; environment.power_limit_w is the enforced limit at the start. "
      "environment.load_at_start and load_at_end say how busy the host was: the load averages and "
      "other_cpu_share, the share of the usable CPUs' time that other processes used over "
      "share_window_s seconds. failures[] are the samples that gave no value (a command that "
      "failed, timed out or printed no metric), with the reason; build_command is how the binary "
      "that ran was built (its variant and architecture selection).",
      fmt::arg("trim_pct", 100 * ab::kTrimFraction), fmt::arg("trim", ab::kTrimFraction),
      fmt::arg("kept", 1 - 2 * ab::kTrimFraction),
      fmt::arg("power_pct", 100 * ab::kPlanningPower));
}

// ---------------------------------------------------------------------------------------------
// Writing

Json number(double value) { return std::isfinite(value) ? Json(value) : Json(nullptr); }
Json number(const std::optional<double>& value) { return value ? number(*value) : Json(nullptr); }

// What applies on which backend: the split policy chooses how CUDA kernels divide the work,
// the thread count is the CPU backend's; kernel settings do not apply to command arms, and
// only the cuda backend reads clocks to flag throttled samples.
bool split_applies(Backend backend) { return backend != Backend::kCpu; }
bool cpu_threads_apply(Backend backend) { return backend != Backend::kCuda; }
bool kernel_settings_apply(const ab::Experiment& experiment) {
  return experiment.baseline.is_kernel();
}
bool throttling_applies(const ab::Experiment& experiment) {
  return kernel_settings_apply(experiment) && experiment.backend != Backend::kCpu;
}

Json context_json(const ab::ContextSpec& context) {
  const bool fixed = context.kind == ab::ContextSpec::Kind::kFixed;
  const bool lognormal = context.kind == ab::ContextSpec::Kind::kLogNormal;
  return {{"kind", name_of(context.kind)},
          {"length", fixed || lognormal ? Json(context.length) : Json(nullptr)},
          {"min_length", fixed ? Json(nullptr) : Json(context.min_length)},
          {"max_length", fixed ? Json(nullptr) : Json(context.max_length)},
          {"sigma", lognormal ? Json(context.sigma) : Json(nullptr)},
          {"seed", context.seed}};
}

Json host_load_json(const ab::HostLoad& load) {
  return {{"load_1min", number(load.load_1min)},
          {"load_5min", number(load.load_5min)},
          {"load_15min", number(load.load_15min)},
          {"other_cpu_share", number(load.other_cpu_share)},
          {"share_window_s",
           load.other_cpu_share ? number(load.share_window_s) : Json(nullptr)}};
}

Json change_json(const ab::Change& change) {
  return {{"paired_rounds", change.paired_rounds},
          {"change_pct", number(change.change_pct)},
          {"lower_pct", number(change.interval_pct.lower)},
          {"upper_pct", number(change.interval_pct.upper)},
          {"standard_error_log", number(change.standard_error_log)},
          {"degrees_of_freedom", change.degrees_of_freedom}};
}

Json experiment_json(const ab::Experiment& experiment) {
  Json variants = Json::array();
  for (const ab::Arm& arm : experiment.variants) {
    variants.push_back(arm_json(arm, experiment.backend));
  }
  const ab::Sweep& sweep = experiment.sweep;
  const ab::Settings& stats = experiment.stats;
  const bool kernel = kernel_settings_apply(experiment);
  const auto kernel_only = [kernel](Json value) { return kernel ? value : Json(nullptr); };
  return {
      {"name", experiment.name},
      {"hypothesis", experiment.hypothesis},
      {"backend", backend_name(experiment.backend)},
      {"source_path", text_or_null(experiment.source_path)},
      {"baseline", arm_json(experiment.baseline, experiment.backend)},
      {"variants", variants},
      {"sweep",
       {{"layout", kernel_only(name_of(sweep.layout))},
        {"heads", kernel_only(sweep.heads)},
        {"page_size", kernel_only(sweep.page_size)},
        {"concurrency", sweep.concurrency},
        {"context", kernel_only(context_json(sweep.context))}}},
      {"measure",
       {{"launches_per_sample", kernel_only(experiment.measure.launches_per_sample)},
        {"max_minutes", experiment.measure.max_minutes},
        {"throttle_fraction", throttling_applies(experiment)
                                  ? Json(experiment.measure.throttle_fraction)
                                  : Json(nullptr)},
        {"heat_ms", experiment.measure.heat_ms},
        {"instances_per_arm", kernel_only(experiment.measure.instances_per_arm)}}},
      {"stats",
       {{"min_effect_pct", stats.min_effect_pct},
        {"alpha", stats.alpha},
        {"min_rounds", stats.min_rounds},
        {"max_rounds", stats.max_rounds},
        {"time_budget_s", stats.time_budget_s},
        {"seed", stats.seed},
        {"correction", name_of(stats.correction)},
        {"family", name_of(stats.family)}}},
      {"source_text", experiment.source_text},
  };
}

Json environment_json(const ab::EnvironmentRecord& environment) {
  return {{"backend", backend_or_null(environment.backend)},
          {"gpu", text_or_null(environment.gpu)},
          {"sm_count", positive_or_null(environment.sm_count)},
          {"sm_clock_mhz", positive_or_null(environment.sm_clock_mhz)},
          {"max_sm_clock_mhz", positive_or_null(environment.max_sm_clock_mhz)},
          {"mem_clock_mhz", positive_or_null(environment.mem_clock_mhz)},
          {"power_limit_w", positive_or_null(environment.power_limit_w)},
          {"driver", text_or_null(environment.driver)},
          {"cuda_runtime", text_or_null(environment.cuda_runtime)},
          {"commit", text_or_null(environment.commit)},
          {"host", text_or_null(environment.host)},
          {"cpu_model", text_or_null(environment.cpu_model)},
          {"hardware_threads", positive_or_null(environment.hardware_threads)},
          {"usable_cpus", positive_or_null(environment.usable_cpus)},
          {"load_at_start", host_load_json(environment.load_at_start)},
          {"load_at_end", host_load_json(environment.load_at_end)}};
}

Json analysis_json(const ab::SweepResult& analysis) {
  Json looks = Json::array();
  for (const ab::Look& look : analysis.looks) {
    looks.push_back({{"rounds", look.rounds}, {"alpha_share", number(look.alpha_share)}});
  }
  Json noise = Json::array();
  for (const ab::PointNoise& point : analysis.noise) {
    noise.push_back({{"concurrency", point.concurrency},
                     {"a_a", change_json(point.a_a)},
                     {"band_pct", number(point.band_pct)},
                     {"baseline_median", number(point.baseline_median)},
                     {"p_check", number(point.p_check)},
                     {"flagged", point.flagged}});
  }
  Json variants = Json::array();
  for (const ab::VariantResult& variant : analysis.variants) {
    Json points = Json::array();
    for (const ab::PointResult& point : variant.points) {
      const auto& rounds_to_settle = point.judgement.rounds_to_settle;
      points.push_back(
          {{"concurrency", point.concurrency},
           {"change", change_json(point.evidence.change)},
           {"threshold_pct", number(point.evidence.threshold_pct)},
           {"p_value", number(point.evidence.p_value)},
           {"p_adjusted", number(point.evidence.p_adjusted)},
           {"p_within", number(point.evidence.p_within)},
           {"looks", point.evidence.looks},
           {"mde_pct", number(point.evidence.mde_pct)},
           {"verdict", name_of(point.judgement.verdict)},
           {"rounds_to_settle", rounds_to_settle ? Json(*rounds_to_settle) : Json(nullptr)},
           {"variant_median", number(point.variant_median)}});
    }
    variants.push_back({{"name", variant.name},
                        {"verdict", name_of(variant.verdict)},
                        {"faster_at", variant.faster_at},
                        {"slower_at", variant.slower_at},
                        {"points", points}});
  }
  return {{"direction", name_of(analysis.direction)},
          {"correction_note", analysis.correction_note},
          {"looks", looks},
          {"noise", noise},
          {"variants", variants}};
}

// ---------------------------------------------------------------------------------------------
// Reading: a view of one JSON object that names the full path of a field it cannot read.

class Reader {
 public:
  Reader(const nlohmann::json& json, std::string path) : json_(json), path_(std::move(path)) {}

  const nlohmann::json& json() const { return json_; }
  const std::string& path() const { return path_; }

  const nlohmann::json& field(std::string_view key) const {
    if (!json_.is_object()) fail(path_, "is not an object");
    const auto found = json_.find(key);
    if (found == json_.end()) fail(sub(key), "is missing");
    return *found;
  }

  template <typename T>
  T get(std::string_view key) const {
    try {
      return field(key).get<T>();
    } catch (const nlohmann::json::exception& error) {
      fail(sub(key), error.what());
    }
  }

  bool has(std::string_view key) const { return json_.is_object() && json_.contains(key); }

  // A backend by name (core/backend.h); null reads as not recorded.
  std::optional<Backend> backend(std::string_view key) const {
    const auto name = get_or<std::string>(key, {});
    if (name.empty()) return std::nullopt;
    const auto backend = parse_backend(name);
    if (!backend) fail(sub(key), fmt::format("'{}' is none of {}", name, backend_names_text()));
    return backend;
  }

  // A field that results_json wrote as null when it was unknown or did not apply: `if_null`
  // then. (Files of schema 1 hold the record's own placeholders instead, which read as they
  // are.)
  template <typename T>
  T get_or(std::string_view key, T if_null) const {
    return field(key).is_null() ? if_null : get<T>(key);
  }

  // A key that files written before it existed lack: if_absent when missing or null.
  template <typename T>
  T get_if_present(std::string_view key, T if_absent) const {
    return has(key) ? get_or<T>(key, std::move(if_absent)) : if_absent;
  }

  // A number that results_json wrote as null when it was not finite.
  double number(std::string_view key, double if_null = std::nan("")) const {
    const nlohmann::json& value = field(key);
    if (value.is_null()) return if_null;
    if (!value.is_number()) fail(sub(key), "is not a number");
    return value.get<double>();
  }

  Reader child(std::string_view key) const { return Reader(field(key), sub(key)); }

  std::vector<Reader> items(std::string_view key) const {
    const nlohmann::json& array = field(key);
    if (!array.is_array()) fail(sub(key), "is not an array");
    std::vector<Reader> items;
    for (std::size_t i = 0; i < array.size(); ++i) {
      items.emplace_back(array[i], fmt::format("{}[{}]", sub(key), i));
    }
    return items;
  }

  // Parses a word with one of format.h's parsers, naming the field on failure.
  template <typename Parse>
  auto word(std::string_view key, Parse parse) const {
    const std::string text = get<std::string>(key);
    try {
      return parse(text);
    } catch (const std::invalid_argument& error) {
      fail(sub(key), error.what());
    }
  }

 private:
  std::string sub(std::string_view key) const {
    return path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key);
  }
  [[noreturn]] static void fail(const std::string& path, const std::string& what) {
    throw std::runtime_error(fmt::format("results.json: {}: {}", path, what));
  }

  const nlohmann::json& json_;
  std::string path_;
};

ab::Change change_from(const Reader& json) {
  return {.paired_rounds = json.get<int>("paired_rounds"),
          .change_pct = json.number("change_pct"),
          .interval_pct = {.lower = json.number("lower_pct", -kInfinity),
                           .upper = json.number("upper_pct", kInfinity)},
          .standard_error_log = json.number("standard_error_log", kInfinity),
          .degrees_of_freedom = json.get<int>("degrees_of_freedom")};
}

ab::Experiment experiment_from(const Reader& json) {
  ab::Experiment experiment;
  experiment.name = json.get<std::string>("name");
  experiment.hypothesis = json.get<std::string>("hypothesis");
  experiment.backend = json.backend("backend").value_or(Backend::kCuda);
  experiment.source_path = json.get_or<std::string>("source_path", {});
  experiment.source_text = json.get<std::string>("source_text");
  experiment.baseline = arm_from_json(json.field("baseline"));
  for (const Reader& arm : json.items("variants")) {
    experiment.variants.push_back(arm_from_json(arm.json()));
  }
  // Settings written as null (they did not apply) read as the defaults the parser gives.
  const ab::Experiment defaults;
  const Reader sweep = json.child("sweep");
  if (!sweep.field("layout").is_null()) {
    const auto layout = parse_layout(sweep.get<std::string>("layout"));
    if (!layout) throw std::runtime_error("results.json: experiment.sweep.layout: not v3 or v4");
    experiment.sweep.layout = *layout;
  }
  experiment.sweep.heads = sweep.get_or<int>("heads", defaults.sweep.heads);
  experiment.sweep.page_size = sweep.get_or<int>("page_size", defaults.sweep.page_size);
  experiment.sweep.concurrency = sweep.get<std::vector<int>>("concurrency");
  if (!sweep.field("context").is_null()) {
    const Reader context = sweep.child("context");
    const ab::ContextSpec& fallback = defaults.sweep.context;
    experiment.sweep.context = {
        .kind = context.word("kind", parse_context_kind),
        .length = context.get_or<int>("length", fallback.length),
        .min_length = context.get_or<int>("min_length", fallback.min_length),
        .max_length = context.get_or<int>("max_length", fallback.max_length),
        .sigma = context.get_or<double>("sigma", fallback.sigma),
        .seed = context.get<std::uint64_t>("seed")};
  }
  const Reader measure = json.child("measure");
  const double heat_ms = measure.get_if_present<double>("heat_ms", defaults.measure.heat_ms);
  experiment.measure = {
      .launches_per_sample =
          measure.get_or<int>("launches_per_sample", defaults.measure.launches_per_sample),
      .max_minutes = measure.get<double>("max_minutes"),
      // A run without the throttle check (CPU, commands) wrote null: the file's default.
      .throttle_fraction =
          measure.get_or<double>("throttle_fraction", ab::default_throttle_fraction(heat_ms)),
      .heat_ms = heat_ms,
      // Records before it ran one instance per arm.
      .instances_per_arm = measure.get_if_present<int>("instances_per_arm", 1)};
  const Reader stats = json.child("stats");
  // Files before schema 3 also hold "resamples", a setting of the earlier statistics: unread.
  experiment.stats = {.min_effect_pct = stats.get<double>("min_effect_pct"),
                      .alpha = stats.get<double>("alpha"),
                      .min_rounds = stats.get<int>("min_rounds"),
                      .max_rounds = stats.get<int>("max_rounds"),
                      .time_budget_s = stats.get<double>("time_budget_s"),
                      .seed = stats.get<std::uint64_t>("seed"),
                      .correction = stats.word("correction", parse_correction),
                      .family = stats.word("family", parse_correction_family)};
  return experiment;
}

ab::HostLoad host_load_from(const Reader& json) {
  const auto optional = [&](std::string_view key) -> std::optional<double> {
    if (json.field(key).is_null()) return std::nullopt;
    return json.number(key);
  };
  ab::HostLoad load{.load_1min = optional("load_1min"),
                    .load_5min = optional("load_5min"),
                    .load_15min = optional("load_15min"),
                    .other_cpu_share = optional("other_cpu_share"),
                    .share_window_s = 0.0};
  if (load.other_cpu_share) load.share_window_s = json.number("share_window_s");
  return load;
}

// Schema 1 has neither the host's CPU nor its load: they read as unknown.
ab::EnvironmentRecord environment_from(const Reader& json, int schema_version) {
  ab::EnvironmentRecord environment;
  environment.backend = json.backend("backend");
  environment.gpu = json.get_or<std::string>("gpu", {});
  environment.sm_count = json.get_or<int>("sm_count", 0);
  environment.sm_clock_mhz = json.get_or<int>("sm_clock_mhz", -1);
  environment.max_sm_clock_mhz = json.get_or<int>("max_sm_clock_mhz", -1);
  environment.mem_clock_mhz = json.get_or<int>("mem_clock_mhz", -1);
  environment.power_limit_w = json.get_if_present<double>("power_limit_w", -1.0);
  environment.driver = json.get_or<std::string>("driver", {});
  environment.cuda_runtime = json.get_or<std::string>("cuda_runtime", {});
  environment.commit = json.get_or<std::string>("commit", {});
  environment.host = json.get_or<std::string>("host", {});
  if (schema_version >= 2) {
    environment.cpu_model = json.get_or<std::string>("cpu_model", {});
    environment.hardware_threads = json.get_or<int>("hardware_threads", 0);
    environment.usable_cpus = json.get_or<int>("usable_cpus", 0);
    environment.load_at_start = host_load_from(json.child("load_at_start"));
    environment.load_at_end = host_load_from(json.child("load_at_end"));
  }
  return environment;
}

ab::SweepResult analysis_from(const Reader& json) {
  ab::SweepResult analysis;
  analysis.direction = json.word("direction", parse_direction);
  analysis.correction_note = json.get<std::string>("correction_note");
  for (const Reader& look : json.items("looks")) {
    analysis.looks.push_back(
        {.rounds = look.get<int>("rounds"), .alpha_share = look.number("alpha_share")});
  }
  for (const Reader& point : json.items("noise")) {
    analysis.noise.push_back({.concurrency = point.get<int>("concurrency"),
                              .a_a = change_from(point.child("a_a")),
                              .band_pct = point.number("band_pct"),
                              .baseline_median = point.number("baseline_median"),
                              .p_check = point.number("p_check"),
                              .flagged = point.get<bool>("flagged")});
  }
  for (const Reader& variant : json.items("variants")) {
    ab::VariantResult result;
    result.name = variant.get<std::string>("name");
    result.verdict = variant.word("verdict", parse_variant_verdict);
    result.faster_at = variant.get<std::vector<int>>("faster_at");
    result.slower_at = variant.get<std::vector<int>>("slower_at");
    for (const Reader& point : variant.items("points")) {
      std::optional<int> rounds_to_settle;
      if (!point.field("rounds_to_settle").is_null()) {
        rounds_to_settle = point.get<int>("rounds_to_settle");
      }
      result.points.push_back(
          {.concurrency = point.get<int>("concurrency"),
           .evidence = {.change = change_from(point.child("change")),
                        .threshold_pct = point.number("threshold_pct"),
                        .p_value = point.number("p_value"),
                        .p_adjusted = point.number("p_adjusted"),
                        .p_within = point.number("p_within"),
                        .looks = point.get<int>("looks"),
                        .mde_pct = point.number("mde_pct", kInfinity)},
           .judgement = {.verdict = point.word("verdict", parse_point_verdict),
                         .rounds_to_settle = rounds_to_settle},
           .variant_median = point.number("variant_median")});
    }
    analysis.variants.push_back(std::move(result));
  }
  return analysis;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

Json text_or_null(const std::string& text) { return text.empty() ? Json(nullptr) : Json(text); }
Json positive_or_null(double value) { return value > 0 ? Json(value) : Json(nullptr); }
Json positive_or_null(int value) { return value > 0 ? Json(value) : Json(nullptr); }
Json backend_or_null(const std::optional<Backend>& backend) {
  return backend ? Json(backend_name(*backend)) : Json(nullptr);
}

Json arm_json(const ab::Arm& arm, Backend backend) {
  Json json = {{"name", arm.name},
               {"prediction_pct",
                arm.prediction_pct ? number(*arm.prediction_pct) : Json(nullptr)}};
  if (const auto* kernel = std::get_if<ab::KernelArm>(&arm.config)) {
    json["kind"] = "kernel";
    json["variant"] = kernel->variant;
    json["split"] = split_applies(backend) ? Json(kernel->split.to_string()) : Json(nullptr);
    json["cpu_threads"] = cpu_threads_apply(backend) ? Json(kernel->cpu_threads) : Json(nullptr);
    json["table"] = text_or_null(kernel->table);
    json["build"] = text_or_null(kernel->build);  // null: this build
    if (!kernel->python.empty()) {                // absent for the other kernel arms
      json["python"] = kernel->python;
      json["params"] = Json::parse(kernel->params);
    }
  } else {
    const auto& command = std::get<ab::CommandArm>(arm.config);
    json["kind"] = "command";
    json["command"] = command.command;
    json["env"] = command.env;
    json["metric"] = command.metric_regex;  // named as the experiment file's key
    json["direction"] = name_of(command.direction);
    json["timeout_s"] = command.timeout_s;
  }
  return json;
}

ab::Arm arm_from_json(const nlohmann::json& json) {
  const Reader reader(json, "arm");
  ab::Arm arm;
  arm.name = reader.get<std::string>("name");
  const Reader named(json, fmt::format("arm '{}'", arm.name));
  if (!named.field("prediction_pct").is_null()) {
    arm.prediction_pct = named.get<double>("prediction_pct");
  }
  const auto kind = named.get<std::string>("kind");
  if (kind == "kernel") {
    // Null where it does not apply (arm_json): the default, as the parser would leave it.
    ab::KernelArm kernel{.variant = named.get<std::string>("variant"),
                         .split = {},
                         .table = named.get_if_present<std::string>("table", {}),
                         .cpu_threads = named.get_or<int>("cpu_threads", 0),
                         .build = named.get_if_present<std::string>("build", {})};
    if (json.contains("python")) {
      kernel.python = named.get<std::string>("python");
      kernel.params = named.field("params").dump();
    }
    if (!named.field("split").is_null()) {
      std::string error;
      const auto split = parse_split_policy(named.get<std::string>("split"), &error);
      if (!split) throw std::runtime_error(fmt::format("results.json: arm '{}'.split: {}",
                                                       arm.name, error));
      kernel.split = *split;
    }
    arm.config = kernel;
  } else if (kind == "command") {
    arm.config = ab::CommandArm{
        .command = named.get<std::string>("command"),
        .env = named.get<std::map<std::string, std::string>>("env"),
        // Schema 1 called the key `metric` "metric_regex".
        .metric_regex = named.get<std::string>(named.has("metric") ? "metric" : "metric_regex"),
        .direction = named.word("direction", parse_direction),
        .timeout_s = named.get<double>("timeout_s")};
  } else {
    throw std::runtime_error(fmt::format(
        "results.json: arm '{}'.kind: '{}' is neither kernel nor command", arm.name, kind));
  }
  return arm;
}

Json results_json(const ab::RunRecord& record) {
  const Backend backend = record.experiment.backend;
  Json arms = Json::array();
  for (const ab::ArmRecord& arm : record.arms) {
    arms.push_back({{"name", arm.name},
                    {"role", name_of(arm.role)},
                    {"config_text", arm.config_text},
                    {"code_hash", text_or_null(arm.code_hash)},
                    {"binary_hash", text_or_null(arm.binary_hash)},
                    {"valid", arm.valid},
                    {"invalid_reason", text_or_null(arm.invalid_reason)},
                    {"config", arm_json(arm.arm, backend)}});
  }
  const bool kernel = kernel_settings_apply(record.experiment);
  Json points = Json::array();
  for (const ab::PointRecord& point : record.points) {
    points.push_back({{"concurrency", point.concurrency},
                      {"context_lengths", kernel ? Json(point.context_lengths) : Json(nullptr)},
                      {"splits", positive_or_null(point.splits)},
                      {"workers", positive_or_null(point.workers)},
                      {"resolved_configs", point.resolved_configs.empty()
                                               ? Json(nullptr)
                                               : Json(point.resolved_configs)},
                      {"rounds", point.rounds},
                      {"throttled_samples", point.throttled_samples},
                      {"stop_reason", name_of(point.stop_reason)},
                      {"stop_text", point.stop_text},
                      {"elapsed_s", number(point.elapsed_s)}});
  }
  Json samples = Json::array();
  for (const ab::Sample& sample : record.samples) {
    samples.push_back({{"point", sample.point},
                       {"round", sample.round},
                       {"order", sample.order},
                       {"arm", sample.arm},
                       {"value", number(sample.value)},
                       {"time_us", positive_or_null(sample.time_us)},
                       {"sm_clock_mhz", positive_or_null(sample.sm_clock_mhz)},
                       {"power_w", positive_or_null(sample.power_w)},
                       {"throttled", sample.throttled}});
  }
  Json failures = Json::array();
  for (const ab::SampleFailure& failure : record.failures) {
    failures.push_back({{"point", failure.point},
                        {"round", failure.round},
                        {"arm", failure.arm},
                        {"reason", failure.reason}});
  }
  return {{"schema", kResultsSchema},
          {"schema_notes", schema_notes()},
          {"started_utc", record.started_utc},
          {"elapsed_s", number(record.elapsed_s)},
          {"partial", record.partial},
          {"partial_reason", text_or_null(record.partial_reason)},
          {"seed", record.seed},
          {"command_line", record.command_line},
          {"build_command", text_or_null(record.build_command)},
          {"experiment", experiment_json(record.experiment)},
          {"environment", environment_json(record.environment)},
          {"arms", arms},
          {"points", points},
          {"analysis", record.analysis ? analysis_json(*record.analysis) : Json(nullptr)},
          {"failures", failures},
          {"samples", samples}};
}

ab::RunRecord record_from_json(const nlohmann::json& json) {
  const Reader root(json, "");
  const auto schema = root.get<std::string>("schema");
  int schema_version = 0;
  for (const auto& [version, name] :
       {std::pair{1, kResultsSchemaV1}, std::pair{2, kResultsSchemaV2},
        std::pair{3, kResultsSchema}}) {
    if (schema == name) schema_version = version;
  }
  if (schema_version == 0) {
    throw std::runtime_error(
        fmt::format("results.json: schema '{}', expected '{}' (or '{}', '{}')", schema,
                    kResultsSchema, kResultsSchemaV2, kResultsSchemaV1));
  }
  ab::RunRecord record;
  record.started_utc = root.get<std::string>("started_utc");
  record.elapsed_s = root.number("elapsed_s");
  record.partial = root.get<bool>("partial");
  record.partial_reason = root.get_or<std::string>("partial_reason", {});
  record.seed = root.get<std::uint64_t>("seed");
  record.command_line = root.get<std::string>("command_line");
  // Absent in files written before it was recorded.
  if (root.has("build_command")) {
    record.build_command = root.get_or<std::string>("build_command", {});
  }
  record.experiment = experiment_from(root.child("experiment"));
  record.environment = environment_from(root.child("environment"), schema_version);
  for (const Reader& arm : root.items("arms")) {
    record.arms.push_back({.name = arm.get<std::string>("name"),
                           .role = arm.word("role", parse_arm_role),
                           .arm = arm_from_json(arm.field("config")),
                           .config_text = arm.get<std::string>("config_text"),
                           .code_hash = arm.get_or<std::string>("code_hash", {}),
                           .binary_hash = arm.get_if_present<std::string>("binary_hash", {}),
                           .valid = arm.get<bool>("valid"),
                           .invalid_reason = arm.get_or<std::string>("invalid_reason", {})});
  }
  for (const Reader& point : root.items("points")) {
    record.points.push_back({.concurrency = point.get<int>("concurrency"),
                             .context_lengths =
                                 point.get_or<std::vector<int>>("context_lengths", {}),
                             .splits = point.get_or<int>("splits", 0),
                             .workers = point.get_if_present<int>("workers", 0),
                             .resolved_configs =
                                 point.get_if_present<std::vector<std::string>>("resolved_configs", {}),
                             .rounds = point.get<int>("rounds"),
                             .throttled_samples = point.get<int>("throttled_samples"),
                             .stop_reason = point.word("stop_reason", parse_stop_reason),
                             .stop_text = point.get<std::string>("stop_text"),
                             .elapsed_s = point.number("elapsed_s")});
  }
  for (const Reader& sample : root.items("samples")) {
    record.samples.push_back({.point = sample.get<int>("point"),
                              .round = sample.get<int>("round"),
                              .order = sample.get<int>("order"),
                              .arm = sample.get<int>("arm"),
                              .value = sample.number("value"),
                              .time_us = sample.number("time_us", 0.0),
                              .sm_clock_mhz = sample.get_or<int>("sm_clock_mhz", -1),
                              .power_w = sample.get_if_present<double>("power_w", -1.0),
                              .throttled = sample.get<bool>("throttled")});
  }
  // Absent in files written before failures were recorded.
  if (root.has("failures")) {
    for (const Reader& failure : root.items("failures")) {
      record.failures.push_back({.point = failure.get<int>("point"),
                                 .round = failure.get<int>("round"),
                                 .arm = failure.get<int>("arm"),
                                 .reason = failure.get<std::string>("reason")});
    }
  }
  // The analysis of files before schema 3 came from the earlier statistics, with other fields
  // and other rules (schema_notes()): left unread, their samples can be analysed again.
  if (schema_version >= 3 && !root.field("analysis").is_null()) {
    record.analysis = analysis_from(root.child("analysis"));
  }
  return record;
}

nlohmann::json read_json_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(fmt::format("cannot open {}", path.string()));
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& error) {
    throw std::runtime_error(fmt::format("{} is not valid JSON: {}", path.string(), error.what()));
  }
}

ab::RunRecord read_results_json(const std::filesystem::path& path) {
  return record_from_json(read_json_file(path));
}

void ResultsJson::write(const ab::RunRecord& record, std::ostream& out) const {
  // The document indented, except the samples: one compact object per line, so that a run of
  // thousands of samples stays a file one can grep and diff.
  const Json json = results_json(record);
  const auto indented = [](const Json& value) {
    std::string text = value.dump(2, ' ', false, kReplaceInvalidUtf8);
    std::string shifted;
    for (const char c : text) {
      shifted += c;
      if (c == '\n') shifted += "  ";
    }
    return shifted;
  };
  out << "{";
  bool first = true;
  for (const auto& [key, value] : json.items()) {
    out << (first ? "\n  " : ",\n  ") << Json(key).dump() << ": ";
    first = false;
    if (key == "samples" && !value.empty()) {
      out << "[";
      for (std::size_t i = 0; i < value.size(); ++i) {
        out << (i == 0 ? "\n    " : ",\n    ")
            << value[i].dump(-1, ' ', false, kReplaceInvalidUtf8);
      }
      out << "\n  ]";
    } else {
      out << indented(value);
    }
  }
  out << "\n}\n";
}

}  // namespace mlalab::report
