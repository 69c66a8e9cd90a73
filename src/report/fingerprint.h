#pragma once
// fingerprint.json: what must match for a rerun to measure the same thing: the GPU, its
// clocks, the driver and runtime, the commit, and every arm's config and code hash (for kernel
// arms the SHA-256 of the variant's SASS, so a rebuild that changes a kernel is caught even at
// the same commit). `mlalab verify` (cli/verify_command.h) gathers the same facts about the
// current build and machine and calls compare_fingerprints, which lives here so that it is
// tested without a GPU.
//
// Layout (schema "mlalab.ab.fingerprint/1"):
//   {"schema", "experiment", "started_utc", "backend", "gpu", "sm_count", "sm_clock_mhz",
//    "max_sm_clock_mhz", "mem_clock_mhz", "driver", "cuda_runtime", "commit", "host",
//    "arms": [{"name", "role", "config_text", "config": {FIELD: TEXT}, "code_hash", "valid"}]}
#include <filesystem>
#include <iosfwd>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "ab/run_record.h"
#include "report/report_writer.h"

namespace mlalab::report {

inline constexpr std::string_view kFingerprintSchema = "mlalab.ab.fingerprint/1";

struct FingerprintArm {
  std::string name;
  ab::ArmRole role = ab::ArmRole::kVariant;
  std::string config_text;  // ArmRecord::config_text, for people
  // The config field by field (config_fields), compared one by one. Empty in a current
  // fingerprint when the config is not known (verify without the experiment file).
  std::map<std::string, std::string> config;
  std::string code_hash;  // empty: none recorded, or not known now
  bool valid = true;
};

struct Fingerprint {
  std::string experiment;  // its name
  std::string started_utc;
  std::string backend;     // "cuda" or "cpu"
  std::string gpu;         // empty: not known now (the CPU backend)
  int sm_count = 0;        // 0: unknown
  int sm_clock_mhz = -1;   // at the start; -1: unknown. Never compared: it moves within a run
  int max_sm_clock_mhz = -1;
  int mem_clock_mhz = -1;
  std::string driver;      // empty: unknown
  std::string cuda_runtime;
  std::string commit;
  std::string host;        // recorded, not compared: another host with the same GPU is fine
  std::vector<FingerprintArm> arms;
};

// An arm's config as comparable fields: "kind" ("kernel" or "command"); kernel arms
// "variant", "split", "cpu_threads"; command arms "command", "metric_regex", "direction",
// "timeout_s" and "env.NAME" per variable.
std::map<std::string, std::string> config_fields(const ab::Arm& arm);

Fingerprint fingerprint_of(const ab::RunRecord& record);

nlohmann::ordered_json fingerprint_json(const Fingerprint& fingerprint);
// Throws std::runtime_error naming the field on another schema or a missing field.
Fingerprint fingerprint_from_json(const nlohmann::json& json);
Fingerprint read_fingerprint(const std::filesystem::path& path);
void write_fingerprint(const Fingerprint& fingerprint, std::ostream& out);

struct Difference {
  std::string what;  // "GPU", "arm w8: code hash", "arm w8: config split"
  std::string recorded;
  std::string current;
  // false for a note: a difference that does not change what is measured by itself (commit,
  // driver, runtime), or a comparison that could not be made, printed but not failing.
  bool blocking = true;
};

// Every difference between a recorded fingerprint and the current one, blocking ones first.
// A field that is unknown on either side (empty, or ≤ 0 for the counts and clocks) is not
// compared. Compared and blocking: backend, GPU, SM count, peak SM and memory clocks, and per
// arm (matched by name; the A′ arm is the baseline again and is skipped) its presence, every
// config field and the code hash. Notes: commit, driver, CUDA runtime, and a code hash that
// exists now but was not recorded.
std::vector<Difference> compare_fingerprints(const Fingerprint& recorded,
                                             const Fingerprint& current);

// "GPU: recorded NVIDIA H200, current NVIDIA H100 80GB HBM3"
std::string difference_line(const Difference& difference);

class FingerprintJson final : public ReportWriter {
 public:
  std::string file_name() const override { return "fingerprint.json"; }
  void write(const ab::RunRecord& record, std::ostream& out) const override;
};

}  // namespace mlalab::report
