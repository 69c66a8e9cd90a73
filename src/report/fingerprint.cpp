#include "report/fingerprint.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <variant>

#include "core/number_text.h"
#include "report/format.h"
#include "report/results_json.h"

namespace mlalab::report {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kAbsent = "absent";

template <typename T>
T field(const nlohmann::json& json, std::string_view key, std::string_view where) {
  const auto found = json.find(key);
  if (found == json.end()) {
    throw std::runtime_error(fmt::format("fingerprint.json: {}{} is missing", where, key));
  }
  try {
    return found->get<T>();
  } catch (const nlohmann::json::exception& error) {
    throw std::runtime_error(fmt::format("fingerprint.json: {}{}: {}", where, key, error.what()));
  }
}

// A recorded backend: null or absent reads as not recorded; a name outside the table is an error.
std::optional<Backend> backend_from_name(const std::string& name) {
  if (name.empty()) return std::nullopt;
  if (const auto backend = parse_backend(name)) return backend;
  throw std::runtime_error(fmt::format("fingerprint.json: backend '{}' is none of {}", name,
                                       backend_names_text()));
}

std::string config_summary(const FingerprintArm& arm) {
  return arm.config_text.empty() ? "present" : arm.config_text;
}

// A field written as null (unknown, or not applicable) reads as `if_null`.
template <typename T>
T field_or(const nlohmann::json& json, std::string_view key, std::string_view where, T if_null) {
  const auto found = json.find(key);
  if (found != json.end() && found->is_null()) return if_null;
  return field<T>(json, key, where);
}

// `object` (a fingerprint's "config" or "sweep", at `where`): text or null per field.
ConfigFields fields_from_json(const nlohmann::json& object, std::string_view where) {
  if (!object.is_object()) {
    throw std::runtime_error(fmt::format("fingerprint.json: {} is not an object", where));
  }
  ConfigFields fields;
  for (const auto& [key, value] : object.items()) {
    if (value.is_null()) {
      fields[key] = std::nullopt;
    } else if (value.is_string()) {
      fields[key] = value.get<std::string>();
    } else {
      throw std::runtime_error(
          fmt::format("fingerprint.json: {}.{}: neither text nor null", where, key));
    }
  }
  return fields;
}

Json fields_json(const ConfigFields& fields) {
  Json object = Json::object();
  for (const auto& [key, value] : fields) object[key] = value ? Json(*value) : Json(nullptr);
  return object;
}

bool is_command_arm(const FingerprintArm& arm) {
  const auto kind = arm.config.find("kind");
  return kind != arm.config.end() && kind->second == "command";
}

// Schema 1 wrote the record's placeholders and every config field on every backend, and named
// a command's metric "metric_regex": the placeholders become unknown, the fields the backend
// ignores null, "metric_regex" the experiment file's "metric", and a run of command arms
// (recorded then as backend cuda, with "cpu (N threads)" as its GPU without one) backend none
// with its GPUs unknown.
void upgrade_from_schema_1(Fingerprint& fingerprint) {
  const bool commands =
      !fingerprint.arms.empty() &&
      std::all_of(fingerprint.arms.begin(), fingerprint.arms.end(), is_command_arm);
  if (commands) {
    fingerprint.backend = Backend::kNone;
    fingerprint.gpu.clear();
    fingerprint.sm_count = 0;
    fingerprint.sm_clock_mhz = fingerprint.max_sm_clock_mhz = fingerprint.mem_clock_mhz = -1;
    fingerprint.driver.clear();
    fingerprint.cuda_runtime.clear();
  }
  if (fingerprint.backend == Backend::kCpu) fingerprint.gpu.clear();
  if (fingerprint.host == "unknown") fingerprint.host.clear();
  for (FingerprintArm& arm : fingerprint.arms) {
    if (is_command_arm(arm)) {
      if (const auto regex = arm.config.extract("metric_regex")) {
        arm.config["metric"] = regex.mapped();  // schema 1's name for the key `metric`
      }
      continue;
    }
    if (fingerprint.backend == Backend::kCpu) arm.config["split"] = std::nullopt;
    if (fingerprint.backend == Backend::kCuda) arm.config["cpu_threads"] = std::nullopt;
  }
}

std::string config_value_text(const ConfigFields& config, const std::string& key) {
  const auto found = config.find(key);
  if (found == config.end()) return kAbsent;
  return found->second ? *found->second : "not applicable";
}

}  // namespace

ConfigFields config_fields(const ab::Arm& arm, Backend backend) {
  ConfigFields fields;
  if (const auto* kernel = std::get_if<ab::KernelArm>(&arm.config)) {
    fields["kind"] = "kernel";
    fields["variant"] = kernel->variant;
    // Each backend ignores the other's knob: the split divides CUDA work, threads CPU work.
    fields["split"] = backend == Backend::kCpu ? std::nullopt
                                       : std::optional<std::string>(kernel->split.to_string());
    fields["cpu_threads"] = backend == Backend::kCuda
                                ? std::nullopt
                                : std::optional<std::string>(std::to_string(kernel->cpu_threads));
    // Another build's arm (its code hash is that build's); absent for this build's arms, as
    // in fingerprints written before worker arms.
    if (!kernel->build.empty()) fields["build"] = kernel->build;
    // A Python arm's callable and params (its code hash covers their source).
    if (!kernel->python.empty()) {
      fields["python"] = kernel->python;
      fields["params"] = kernel->params;
    }
    return fields;
  }
  const auto& command = std::get<ab::CommandArm>(arm.config);
  fields["kind"] = "command";
  fields["command"] = command.command;
  fields["metric"] = command.metric_regex;  // named as the experiment file names it
  fields["direction"] = std::string(name_of(command.direction));
  fields["timeout_s"] = fmt::format("{:g}", command.timeout_s);
  for (const auto& [name, value] : command.env) fields["env." + name] = value;
  return fields;
}

Fingerprint machine_fingerprint(const ab::EnvironmentRecord& environment) {
  return Fingerprint{.experiment = {},
                     .started_utc = {},
                     .backend = environment.backend,
                     .gpu = environment.gpu,
                     .sm_count = environment.sm_count,
                     .sm_clock_mhz = environment.sm_clock_mhz,
                     .max_sm_clock_mhz = environment.max_sm_clock_mhz,
                     .mem_clock_mhz = environment.mem_clock_mhz,
                     .driver = environment.driver,
                     .cuda_runtime = environment.cuda_runtime,
                     .cpu_model = environment.cpu_model,
                     .hardware_threads = environment.hardware_threads,
                     .usable_cpus = environment.usable_cpus,
                     .commit = environment.commit,
                     .host = environment.host,
                     .arms = {}};
}

ab::EnvironmentRecord machine_of(const Fingerprint& fingerprint) {
  ab::EnvironmentRecord environment;
  environment.backend = fingerprint.backend;
  environment.gpu = fingerprint.gpu;
  environment.sm_count = fingerprint.sm_count;
  environment.sm_clock_mhz = fingerprint.sm_clock_mhz;
  environment.max_sm_clock_mhz = fingerprint.max_sm_clock_mhz;
  environment.mem_clock_mhz = fingerprint.mem_clock_mhz;
  environment.driver = fingerprint.driver;
  environment.cuda_runtime = fingerprint.cuda_runtime;
  environment.commit = fingerprint.commit;
  environment.host = fingerprint.host;
  environment.cpu_model = fingerprint.cpu_model;
  environment.hardware_threads = fingerprint.hardware_threads;
  environment.usable_cpus = fingerprint.usable_cpus;
  return environment;
}

ConfigFields sweep_fields(const ab::Experiment& experiment) {
  const ab::ContextSpec& context = experiment.sweep.context;
  std::string context_text;
  switch (context.kind) {
    case ab::ContextSpec::Kind::kFixed:
      context_text = std::to_string(context.length);
      break;
    case ab::ContextSpec::Kind::kUniform:
      context_text = fmt::format("uniform [{}, {}] seed {}", context.min_length,
                                 context.max_length, context.seed);
      break;
    case ab::ContextSpec::Kind::kLogNormal:
      context_text = fmt::format("lognormal median {} sigma {:g} [{}, {}] seed {}",
                                 context.length, context.sigma, context.min_length,
                                 context.max_length, context.seed);
      break;
  }
  ConfigFields fields{
      {"layout", std::string(name_of(experiment.sweep.layout))},
      {"heads", std::to_string(experiment.sweep.heads)},
      {"page_size", std::to_string(experiment.sweep.page_size)},
      {"concurrency", fmt::format("{}", fmt::join(experiment.sweep.concurrency, ","))},
      {"context", context_text},
      {"launches_per_sample", std::to_string(experiment.measure.launches_per_sample)}};
  // Only where heat is on, so that fingerprints from before it still compare equal.
  if (experiment.measure.heat_ms > 0) {
    fields["heat_ms"] = fmt::format("{:g}", experiment.measure.heat_ms);
  }
  return fields;
}

Fingerprint fingerprint_of(const ab::RunRecord& record) {
  Fingerprint fingerprint = machine_fingerprint(record.environment);
  fingerprint.experiment = record.experiment.name;
  fingerprint.sweep = sweep_fields(record.experiment);
  fingerprint.started_utc = record.started_utc;
  for (const ab::ArmRecord& arm : record.arms) {
    fingerprint.arms.push_back({.name = arm.name,
                                .role = arm.role,
                                .config_text = arm.config_text,
                                .config = config_fields(arm.arm, record.experiment.backend),
                                .code_hash = arm.code_hash,
                                .binary_hash = arm.binary_hash,
                                .valid = arm.valid});
  }
  return fingerprint;
}

Json fingerprint_json(const Fingerprint& fingerprint) {
  Json arms = Json::array();
  for (const FingerprintArm& arm : fingerprint.arms) {
    arms.push_back({{"name", arm.name},
                    {"role", name_of(arm.role)},
                    {"config_text", arm.config_text},
                    {"config", fields_json(arm.config)},
                    {"code_hash", text_or_null(arm.code_hash)},
                    {"binary_hash", text_or_null(arm.binary_hash)},
                    {"valid", arm.valid}});
  }
  return {{"schema", kFingerprintSchema},
          {"experiment", fingerprint.experiment},
          {"started_utc", fingerprint.started_utc},
          {"backend", backend_or_null(fingerprint.backend)},
          {"gpu", text_or_null(fingerprint.gpu)},
          {"sm_count", positive_or_null(fingerprint.sm_count)},
          {"sm_clock_mhz", positive_or_null(fingerprint.sm_clock_mhz)},
          {"max_sm_clock_mhz", positive_or_null(fingerprint.max_sm_clock_mhz)},
          {"mem_clock_mhz", positive_or_null(fingerprint.mem_clock_mhz)},
          {"driver", text_or_null(fingerprint.driver)},
          {"cuda_runtime", text_or_null(fingerprint.cuda_runtime)},
          {"cpu_model", text_or_null(fingerprint.cpu_model)},
          {"hardware_threads", positive_or_null(fingerprint.hardware_threads)},
          {"usable_cpus", positive_or_null(fingerprint.usable_cpus)},
          {"commit", text_or_null(fingerprint.commit)},
          {"host", text_or_null(fingerprint.host)},
          {"sweep", fingerprint.sweep.empty() ? Json(nullptr) : fields_json(fingerprint.sweep)},
          {"arms", arms}};
}

Fingerprint fingerprint_from_json(const nlohmann::json& json) {
  if (!json.is_object()) throw std::runtime_error("fingerprint.json: not a JSON object");
  const auto schema = field<std::string>(json, "schema", "");
  if (schema != kFingerprintSchema && schema != kFingerprintSchemaV1) {
    throw std::runtime_error(fmt::format("fingerprint.json: schema '{}', expected '{}' (or '{}')",
                                         schema, kFingerprintSchema, kFingerprintSchemaV1));
  }
  const bool schema_1 = schema == kFingerprintSchemaV1;
  // Fields that schema 1 did not have are unknown there.
  const auto added = [&]<typename T>(std::string_view key, T if_unknown) {
    return schema_1 ? if_unknown : field_or<T>(json, key, "", if_unknown);
  };
  Fingerprint fingerprint{
      .experiment = field<std::string>(json, "experiment", ""),
      .started_utc = field<std::string>(json, "started_utc", ""),
      .backend = backend_from_name(field_or<std::string>(json, "backend", "", {})),
      .gpu = field_or<std::string>(json, "gpu", "", {}),
      .sm_count = field_or<int>(json, "sm_count", "", 0),
      .sm_clock_mhz = field_or<int>(json, "sm_clock_mhz", "", -1),
      .max_sm_clock_mhz = field_or<int>(json, "max_sm_clock_mhz", "", -1),
      .mem_clock_mhz = field_or<int>(json, "mem_clock_mhz", "", -1),
      .driver = field_or<std::string>(json, "driver", "", {}),
      .cuda_runtime = field_or<std::string>(json, "cuda_runtime", "", {}),
      .cpu_model = added("cpu_model", std::string{}),
      .hardware_threads = added("hardware_threads", 0),
      .usable_cpus = added("usable_cpus", 0),
      .commit = field_or<std::string>(json, "commit", "", {}),
      .host = field_or<std::string>(json, "host", "", {}),
      .arms = {}};
  const auto arms = field<nlohmann::json>(json, "arms", "");
  if (!arms.is_array()) throw std::runtime_error("fingerprint.json: arms is not an array");
  for (std::size_t i = 0; i < arms.size(); ++i) {
    const std::string where = fmt::format("arms[{}].", i);
    FingerprintArm arm{.name = field<std::string>(arms[i], "name", where),
                       .role = ab::ArmRole::kVariant,
                       .config_text = field<std::string>(arms[i], "config_text", where),
                       .config = fields_from_json(field<nlohmann::json>(arms[i], "config", where),
                                                  fmt::format("{}config", where)),
                       .code_hash = field_or<std::string>(arms[i], "code_hash", where, {}),
                       .binary_hash = arms[i].contains("binary_hash")
                                          ? field_or<std::string>(arms[i], "binary_hash", where, {})
                                          : std::string{},
                       .valid = field<bool>(arms[i], "valid", where)};
    try {
      arm.role = parse_arm_role(field<std::string>(arms[i], "role", where));
    } catch (const std::invalid_argument& error) {
      throw std::runtime_error(fmt::format("fingerprint.json: {}role: {}", where, error.what()));
    }
    fingerprint.arms.push_back(std::move(arm));
  }
  // Recorded since schema 2 was in use: absent (or null) in earlier files, unknown there.
  if (json.contains("sweep") && !json["sweep"].is_null()) {
    fingerprint.sweep = fields_from_json(json["sweep"], "sweep");
  }
  if (schema_1) upgrade_from_schema_1(fingerprint);
  return fingerprint;
}

Fingerprint read_fingerprint(const std::filesystem::path& path) {
  const nlohmann::json json = read_json_file(path);
  try {
    return fingerprint_from_json(json);
  } catch (const std::runtime_error& error) {
    // fingerprint_from_json names the file by its usual name; the reader's own path is clearer,
    // and a run's results.json (same folder, another schema) is the likely mix-up.
    std::string message = error.what();
    constexpr std::string_view kUsualName = "fingerprint.json";
    if (message.starts_with(kUsualName)) message.replace(0, kUsualName.size(), path.string());
    if (json.is_object() && json.contains("schema") && json["schema"].is_string() &&
        json["schema"].get<std::string>().starts_with("mlalab.ab.results/")) {
      message += fmt::format(": this is a run's results; its fingerprint is {}",
                             (path.parent_path() / kUsualName).string());
    }
    throw std::runtime_error(message);
  }
}

void write_fingerprint(const Fingerprint& fingerprint, std::ostream& out) {
  out << fingerprint_json(fingerprint).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
      << "\n";
}

Comparison compare_fingerprints(const Fingerprint& recorded, const Fingerprint& current) {
  Comparison comparison;
  std::vector<Difference>& differences = comparison.differences;
  // A field known on both sides is compared (and listed); one unknown on either side is not.
  const auto compare = [&](const std::string& what, bool known_before, bool known_now,
                           bool equal, std::string was, std::string now, bool blocking) {
    if (!known_before || !known_now) {
      if (blocking) {
        comparison.not_compared.push_back(
            fmt::format("{} ({})", what, known_before ? "unknown now" : "not recorded"));
      }
      return;
    }
    (blocking ? comparison.compared : comparison.noted).push_back(what);
    if (!equal) differences.push_back({what, std::move(was), std::move(now), blocking});
  };
  const auto text = [&](const std::string& what, const std::string& was, const std::string& now,
                        bool blocking) {
    compare(what, !was.empty(), !now.empty(), was == now, was, now, blocking);
  };
  const auto count = [&](const std::string& what, int was, int now, const char* unit) {
    compare(what, was > 0, now > 0, was == now, fmt::format("{}{}", was, unit),
            fmt::format("{}{}", now, unit), true);
  };
  const auto backend_text = [](const std::optional<Backend>& backend) {
    return backend ? std::string(backend_name(*backend)) : std::string();
  };
  text("backend", backend_text(recorded.backend), backend_text(current.backend), true);
  const bool on_gpu = recorded.backend != Backend::kCpu && recorded.backend != Backend::kNone;
  if (on_gpu) {
    text("GPU", recorded.gpu, current.gpu, true);
    count("SM count", recorded.sm_count, current.sm_count, "");
    count("peak SM clock", recorded.max_sm_clock_mhz, current.max_sm_clock_mhz, " MHz");
    count("memory clock", recorded.mem_clock_mhz, current.mem_clock_mhz, " MHz");
  } else {
    // The arms' threads (the CPU backend's, or the commands') run on the host's CPUs.
    text("CPU model", recorded.cpu_model, current.cpu_model, true);
    count("hardware threads", recorded.hardware_threads, current.hardware_threads, "");
    count("usable CPUs", recorded.usable_cpus, current.usable_cpus, "");
    if (recorded.backend == Backend::kNone) {
      text("GPUs visible", recorded.gpu, current.gpu, true);
    }
  }

  // The sweep: known now only from the experiment file (verify --experiment).
  if (!current.sweep.empty()) {
    if (recorded.sweep.empty()) {
      comparison.not_compared.push_back("the sweep (not recorded)");
    } else {
      comparison.compared.push_back("the sweep");
      std::map<std::string, std::optional<std::string>> keys = recorded.sweep;
      keys.insert(current.sweep.begin(), current.sweep.end());
      for (const auto& [key, ignored] : keys) {
        const std::string a = config_value_text(recorded.sweep, key);
        const std::string b = config_value_text(current.sweep, key);
        if (a != b) differences.push_back({"sweep " + key, a, b, true});
      }
    }
  }

  const auto compared = [](const FingerprintArm& arm) {
    return arm.role != ab::ArmRole::kBaselineRepeat;
  };
  const auto find = [&](const std::vector<FingerprintArm>& arms, const std::string& name) {
    const auto found = std::find_if(arms.begin(), arms.end(), [&](const FingerprintArm& arm) {
      return compared(arm) && arm.name == name;
    });
    return found == arms.end() ? nullptr : &*found;
  };
  int configs_compared = 0;
  int hashes_compared = 0;
  int hashes_unknown = 0;
  int binaries_unknown = 0;
  for (const FingerprintArm& was : recorded.arms) {
    if (!compared(was)) continue;
    const std::string prefix = fmt::format("arm {}: ", was.name);
    const FingerprintArm* now = find(current.arms, was.name);
    if (!now) {
      differences.push_back({prefix + "presence", config_summary(was), kAbsent, true});
      continue;
    }
    if (!now->config.empty()) {
      ++configs_compared;
      std::map<std::string, std::optional<std::string>> keys = was.config;
      keys.insert(now->config.begin(), now->config.end());
      for (const auto& [key, ignored] : keys) {
        const std::string a = config_value_text(was.config, key);
        const std::string b = config_value_text(now->config, key);
        if (a != b) differences.push_back({prefix + "config " + key, a, b, true});
      }
    }
    if (was.code_hash.empty() && !now->code_hash.empty()) {
      // Nothing to compare with, but worth saying: the run predates this code hash.
      differences.push_back({prefix + "code hash", "none", now->code_hash, false});
    } else if (was.code_hash.empty() || now->code_hash.empty()) {
      ++hashes_unknown;
    } else {
      ++hashes_compared;
      if (was.code_hash != now->code_hash) {
        differences.push_back({prefix + "code hash", was.code_hash, now->code_hash, true});
      }
    }
    // Compiled binaries are known only once a run has compiled them: compared when both sides
    // have them; the code hash (source, params, compiler versions) is what must match.
    if (!was.binary_hash.empty() && !now->binary_hash.empty()) {
      if (was.binary_hash != now->binary_hash) {
        differences.push_back({prefix + "binary hash", was.binary_hash, now->binary_hash, false});
      }
    } else if (!was.binary_hash.empty()) {
      ++binaries_unknown;
    }
  }
  for (const FingerprintArm& now : current.arms) {
    if (compared(now) && !find(recorded.arms, now.name)) {
      differences.push_back(
          {fmt::format("arm {}: presence", now.name), kAbsent, config_summary(now), true});
    }
  }
  if (hashes_compared > 0) {
    comparison.compared.push_back("the code hashes of " + counted(hashes_compared, "arm"));
  }
  if (hashes_unknown > 0) {
    comparison.not_compared.push_back(
        fmt::format("the code hashes of {} (unknown on one side)", counted(hashes_unknown, "arm")));
  }
  if (configs_compared > 0) {
    comparison.compared.push_back("the configs of " + counted(configs_compared, "arm"));
  }
  if (binaries_unknown > 0) {
    comparison.not_compared.push_back(fmt::format(
        "the compiled Triton binaries of {} (a run compiles them; their hashes stay recorded)",
        counted(binaries_unknown, "arm")));
  }

  text("commit", recorded.commit, current.commit, false);
  if (on_gpu) {
    text("driver", recorded.driver, current.driver, false);
    text("CUDA runtime", recorded.cuda_runtime, current.cuda_runtime, false);
  }
  text("host", recorded.host, current.host, false);
  std::stable_partition(differences.begin(), differences.end(),
                        [](const Difference& difference) { return difference.blocking; });
  return comparison;
}

std::string difference_line(const Difference& difference) {
  return fmt::format("{}: recorded {}, current {}", difference.what, difference.recorded,
                     difference.current);
}

void FingerprintJson::write(const ab::RunRecord& record, std::ostream& out) const {
  write_fingerprint(fingerprint_of(record), out);
}

}  // namespace mlalab::report
