#pragma once
// fingerprint.json: what must match for a rerun to measure the same thing: the machine (the
// GPU and its clocks, or the host's CPU), the driver and runtime, the commit, and every arm's
// config and code hash (kernel arms on the GPU: the SHA-256 of the variant's SASS; on the CPU:
// of the CPU backend's machine code; commands: of the command line), so that a rebuild that
// changes the code is caught even at the same commit. `mlalab verify`
// (cli/verify_command.h) gathers the same facts about the current build and machine and calls
// compare_fingerprints, which lives here so that it is tested without a GPU.
//
// Layout (schema "mlalab.ab.fingerprint/2"):
//   {"schema", "experiment", "started_utc", "backend", "gpu", "sm_count", "sm_clock_mhz",
//    "max_sm_clock_mhz", "mem_clock_mhz", "driver", "cuda_runtime", "cpu_model",
//    "hardware_threads", "usable_cpus", "commit", "host",
//    "arms": [{"name", "role", "config_text", "config": {FIELD: TEXT}, "code_hash", "valid"}]}
// "backend" is "cuda", "cpu" or "none" (command arms). A field that is unknown or does not
// apply is null, never 0, -1 or "": the GPU's fields on the cpu backend; on the none backend
// "gpu" says which GPUs the commands could see ("none" when there were none); a config field
// that the backend ignores (a kernel arm's "split" on the cpu backend, its "cpu_threads" on
// the cuda backend).
//
// Schema 1 (until the host's CPU was recorded) used those placeholders, and "gpu" was
// "cpu (N threads)" on the cpu backend; fingerprint_from_json reads it too, placeholders as
// unknown and the fields a backend ignores as null.
#include <filesystem>
#include <iosfwd>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ab/run_record.h"
#include "report/report_writer.h"

namespace mlalab::report {

inline constexpr std::string_view kFingerprintSchema = "mlalab.ab.fingerprint/2";
inline constexpr std::string_view kFingerprintSchemaV1 = "mlalab.ab.fingerprint/1";

// An arm's config as comparable fields; nullopt: the field does not apply on this backend.
using ConfigFields = std::map<std::string, std::optional<std::string>>;

struct FingerprintArm {
  std::string name;
  ab::ArmRole role = ab::ArmRole::kVariant;
  std::string config_text;  // ArmRecord::config_text, for people
  // The config field by field (config_fields), compared one by one. Empty in a current
  // fingerprint when the config is not known (verify without the experiment file).
  ConfigFields config;
  std::string code_hash;  // empty: none recorded, or not known now
  // A Python arm's Triton binaries as the run compiled them (ab::ArmRecord::binary_hash):
  // recorded for people and for comparing two runs; verify cannot know it without a run.
  std::string binary_hash{};
  bool valid = true;
};

// The machine part follows ab::EnvironmentRecord's conventions: empty texts, 0 counts and -1
// clocks are unknown or do not apply.
struct Fingerprint {
  std::string experiment;  // its name
  std::string started_utc;
  std::optional<Backend> backend;  // nullopt: not recorded
  std::string gpu;         // cuda: the GPU; none: the GPUs visible to the commands
  int sm_count = 0;
  int sm_clock_mhz = -1;   // at the start. Never compared: it moves within a run
  int max_sm_clock_mhz = -1;
  int mem_clock_mhz = -1;
  std::string driver;
  std::string cuda_runtime;
  std::string cpu_model;
  int hardware_threads = 0;
  int usable_cpus = 0;
  std::string commit;
  std::string host;
  std::vector<FingerprintArm> arms;
  // What every arm was measured on (sweep_fields), compared field by field. Empty: not
  // recorded (fingerprints before it), or not known now (verify without the experiment file).
  ConfigFields sweep{};
};

// An arm's config as comparable fields: "kind" ("kernel" or "command"); kernel arms
// "variant", "split" (nullopt on the cpu backend) and "cpu_threads" (nullopt on the cuda
// backend); command arms "command", "metric" (named as the experiment file's key),
// "direction", "timeout_s" and "env.NAME" per variable.
ConfigFields config_fields(const ab::Arm& arm, Backend backend);

// The experiment's sweep and samples as comparable fields: "layout", "heads", "page_size",
// "concurrency", "context", "launches_per_sample", and "heat_ms" where heat is on: what
// changes every arm's measurement alike.
ConfigFields sweep_fields(const ab::Experiment& experiment);

Fingerprint fingerprint_of(const ab::RunRecord& record);
// The machine part alone (no experiment, no arms): what `mlalab verify` reads now.
Fingerprint machine_fingerprint(const ab::EnvironmentRecord& environment);
// The machine part back as an environment record, for ab/environment.h's texts.
ab::EnvironmentRecord machine_of(const Fingerprint& fingerprint);

nlohmann::ordered_json fingerprint_json(const Fingerprint& fingerprint);
// Reads schema 2 and schema 1. Throws std::runtime_error naming the field on another schema or
// a missing field.
Fingerprint fingerprint_from_json(const nlohmann::json& json);
Fingerprint read_fingerprint(const std::filesystem::path& path);
void write_fingerprint(const Fingerprint& fingerprint, std::ostream& out);

struct Difference {
  std::string what;  // "GPU", "arm w8: code hash", "arm w8: config split"
  std::string recorded;
  std::string current;
  // false for a note: a difference that does not change what is measured by itself (commit,
  // driver, runtime, host), or a comparison that could not be made, printed but not failing.
  bool blocking = true;
};

struct Comparison {
  std::vector<Difference> differences;  // blocking ones first
  // What was compared, each a field known on both sides: "backend", "GPU", "CPU model",
  // "the code hashes of 3 arms", ...; those whose differences block, then those only noted.
  std::vector<std::string> compared;
  std::vector<std::string> noted;
  // Fields this backend compares that are unknown on one side, so not compared: "CPU model
  // (not recorded)".
  std::vector<std::string> not_compared;
};

// Compares what must match for the recorded backend; a field unknown on either side is not
// compared (and listed in not_compared). Blocking:
//   every backend: the backend; the sweep's fields when both sides know them; per arm
//     (matched by name; the A′ arm is the baseline again and is skipped) its presence and
//     every config field when the current config is known, and its code hash when both are
//     known;
//   cuda: GPU, SM count, peak SM clock, memory clock;
//   cpu:  CPU model, hardware threads, usable CPUs (what the CPU backend's threads run on);
//   none: the same, and the GPUs visible to the commands.
// Notes: commit, driver and CUDA runtime (cuda), host, and a code hash that exists now but
// was not recorded. A changed host is a note on every backend: the fields above are what
// decides the measurement; another host of the same kind measures alike, and a container's
// host name changes with every start.
Comparison compare_fingerprints(const Fingerprint& recorded, const Fingerprint& current);

// "GPU: recorded NVIDIA H200, current NVIDIA H100 80GB HBM3"
std::string difference_line(const Difference& difference);

class FingerprintJson final : public ReportWriter {
 public:
  std::string file_name() const override { return "fingerprint.json"; }
  void write(const ab::RunRecord& record, std::ostream& out) const override;
};

}  // namespace mlalab::report
