#include "report/fingerprint.h"

#include <fmt/format.h>

#include <algorithm>
#include <ostream>
#include <stdexcept>
#include <variant>

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

std::string config_summary(const FingerprintArm& arm) {
  return arm.config_text.empty() ? "present" : arm.config_text;
}

}  // namespace

std::map<std::string, std::string> config_fields(const ab::Arm& arm) {
  std::map<std::string, std::string> fields;
  if (const auto* kernel = std::get_if<ab::KernelArm>(&arm.config)) {
    fields["kind"] = "kernel";
    fields["variant"] = kernel->variant;
    fields["split"] = kernel->split.to_string();
    fields["cpu_threads"] = std::to_string(kernel->cpu_threads);
    return fields;
  }
  const auto& command = std::get<ab::CommandArm>(arm.config);
  fields["kind"] = "command";
  fields["command"] = command.command;
  fields["metric_regex"] = command.metric_regex;
  fields["direction"] = name_of(command.direction);
  fields["timeout_s"] = fmt::format("{:g}", command.timeout_s);
  for (const auto& [name, value] : command.env) fields["env." + name] = value;
  return fields;
}

Fingerprint fingerprint_of(const ab::RunRecord& record) {
  const ab::EnvironmentRecord& environment = record.environment;
  Fingerprint fingerprint{.experiment = record.experiment.name,
                          .started_utc = record.started_utc,
                          .backend = environment.backend,
                          .gpu = environment.gpu,
                          .sm_count = environment.sm_count,
                          .sm_clock_mhz = environment.sm_clock_mhz,
                          .max_sm_clock_mhz = environment.max_sm_clock_mhz,
                          .mem_clock_mhz = environment.mem_clock_mhz,
                          .driver = environment.driver,
                          .cuda_runtime = environment.cuda_runtime,
                          .commit = environment.commit,
                          .host = environment.host,
                          .arms = {}};
  for (const ab::ArmRecord& arm : record.arms) {
    fingerprint.arms.push_back({.name = arm.name,
                                .role = arm.role,
                                .config_text = arm.config_text,
                                .config = config_fields(arm.arm),
                                .code_hash = arm.code_hash,
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
                    {"config", arm.config},
                    {"code_hash", arm.code_hash},
                    {"valid", arm.valid}});
  }
  return {{"schema", kFingerprintSchema},
          {"experiment", fingerprint.experiment},
          {"started_utc", fingerprint.started_utc},
          {"backend", fingerprint.backend},
          {"gpu", fingerprint.gpu},
          {"sm_count", fingerprint.sm_count},
          {"sm_clock_mhz", fingerprint.sm_clock_mhz},
          {"max_sm_clock_mhz", fingerprint.max_sm_clock_mhz},
          {"mem_clock_mhz", fingerprint.mem_clock_mhz},
          {"driver", fingerprint.driver},
          {"cuda_runtime", fingerprint.cuda_runtime},
          {"commit", fingerprint.commit},
          {"host", fingerprint.host},
          {"arms", arms}};
}

Fingerprint fingerprint_from_json(const nlohmann::json& json) {
  if (!json.is_object()) throw std::runtime_error("fingerprint.json: not a JSON object");
  const auto schema = field<std::string>(json, "schema", "");
  if (schema != kFingerprintSchema) {
    throw std::runtime_error(fmt::format("fingerprint.json: schema '{}', expected '{}'", schema,
                                         kFingerprintSchema));
  }
  Fingerprint fingerprint{.experiment = field<std::string>(json, "experiment", ""),
                          .started_utc = field<std::string>(json, "started_utc", ""),
                          .backend = field<std::string>(json, "backend", ""),
                          .gpu = field<std::string>(json, "gpu", ""),
                          .sm_count = field<int>(json, "sm_count", ""),
                          .sm_clock_mhz = field<int>(json, "sm_clock_mhz", ""),
                          .max_sm_clock_mhz = field<int>(json, "max_sm_clock_mhz", ""),
                          .mem_clock_mhz = field<int>(json, "mem_clock_mhz", ""),
                          .driver = field<std::string>(json, "driver", ""),
                          .cuda_runtime = field<std::string>(json, "cuda_runtime", ""),
                          .commit = field<std::string>(json, "commit", ""),
                          .host = field<std::string>(json, "host", ""),
                          .arms = {}};
  const auto arms = field<nlohmann::json>(json, "arms", "");
  if (!arms.is_array()) throw std::runtime_error("fingerprint.json: arms is not an array");
  for (std::size_t i = 0; i < arms.size(); ++i) {
    const std::string where = fmt::format("arms[{}].", i);
    FingerprintArm arm{
        .name = field<std::string>(arms[i], "name", where),
        .role = ab::ArmRole::kVariant,
        .config_text = field<std::string>(arms[i], "config_text", where),
        .config = field<std::map<std::string, std::string>>(arms[i], "config", where),
        .code_hash = field<std::string>(arms[i], "code_hash", where),
        .valid = field<bool>(arms[i], "valid", where)};
    try {
      arm.role = parse_arm_role(field<std::string>(arms[i], "role", where));
    } catch (const std::invalid_argument& error) {
      throw std::runtime_error(fmt::format("fingerprint.json: {}role: {}", where, error.what()));
    }
    fingerprint.arms.push_back(std::move(arm));
  }
  return fingerprint;
}

Fingerprint read_fingerprint(const std::filesystem::path& path) {
  return fingerprint_from_json(read_json_file(path));
}

void write_fingerprint(const Fingerprint& fingerprint, std::ostream& out) {
  out << fingerprint_json(fingerprint).dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
      << "\n";
}

std::vector<Difference> compare_fingerprints(const Fingerprint& recorded,
                                             const Fingerprint& current) {
  std::vector<Difference> differences;
  const auto text = [&](std::string what, const std::string& was, const std::string& now,
                        bool blocking) {
    if (!was.empty() && !now.empty() && was != now) {
      differences.push_back({std::move(what), was, now, blocking});
    }
  };
  const auto count = [&](std::string what, int was, int now, const char* unit) {
    if (was > 0 && now > 0 && was != now) {
      differences.push_back({std::move(what), fmt::format("{}{}", was, unit),
                             fmt::format("{}{}", now, unit), true});
    }
  };
  text("backend", recorded.backend, current.backend, true);
  text("GPU", recorded.gpu, current.gpu, true);
  count("SM count", recorded.sm_count, current.sm_count, "");
  count("peak SM clock", recorded.max_sm_clock_mhz, current.max_sm_clock_mhz, " MHz");
  count("memory clock", recorded.mem_clock_mhz, current.mem_clock_mhz, " MHz");

  const auto compared = [](const FingerprintArm& arm) {
    return arm.role != ab::ArmRole::kBaselineRepeat;
  };
  const auto find = [&](const std::vector<FingerprintArm>& arms, const std::string& name) {
    const auto found = std::find_if(arms.begin(), arms.end(), [&](const FingerprintArm& arm) {
      return compared(arm) && arm.name == name;
    });
    return found == arms.end() ? nullptr : &*found;
  };
  for (const FingerprintArm& was : recorded.arms) {
    if (!compared(was)) continue;
    const std::string prefix = fmt::format("arm {}: ", was.name);
    const FingerprintArm* now = find(current.arms, was.name);
    if (!now) {
      differences.push_back({prefix + "presence", config_summary(was), kAbsent, true});
      continue;
    }
    if (!now->config.empty()) {
      std::map<std::string, std::string> keys = was.config;
      keys.insert(now->config.begin(), now->config.end());
      for (const auto& [key, ignored] : keys) {
        const auto old_value = was.config.find(key);
        const auto new_value = now->config.find(key);
        const std::string a = old_value == was.config.end() ? kAbsent : old_value->second;
        const std::string b = new_value == now->config.end() ? kAbsent : new_value->second;
        if (a != b) differences.push_back({prefix + "config " + key, a, b, true});
      }
    }
    if (was.code_hash.empty() && !now->code_hash.empty()) {
      // Nothing to compare with, but worth saying: the run predates code hashes, or ran on
      // the CPU backend. (A hash unknown now, on the other hand, is simply not compared.)
      differences.push_back({prefix + "code hash", "none", now->code_hash, false});
    } else {
      text(prefix + "code hash", was.code_hash, now->code_hash, true);
    }
  }
  for (const FingerprintArm& now : current.arms) {
    if (compared(now) && !find(recorded.arms, now.name)) {
      differences.push_back(
          {fmt::format("arm {}: presence", now.name), kAbsent, config_summary(now), true});
    }
  }

  text("commit", recorded.commit, current.commit, false);
  text("driver", recorded.driver, current.driver, false);
  text("CUDA runtime", recorded.cuda_runtime, current.cuda_runtime, false);
  std::stable_partition(differences.begin(), differences.end(),
                        [](const Difference& difference) { return difference.blocking; });
  return differences;
}

std::string difference_line(const Difference& difference) {
  return fmt::format("{}: recorded {}, current {}", difference.what, difference.recorded,
                     difference.current);
}

void FingerprintJson::write(const ab::RunRecord& record, std::ostream& out) const {
  write_fingerprint(fingerprint_of(record), out);
}

}  // namespace mlalab::report
