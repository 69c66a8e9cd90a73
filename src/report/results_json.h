#pragma once
// results.json: the whole RunRecord, so that another tool can recompute every figure of the
// report: the experiment (every setting and the file as read), the environment, the arms, the
// sweep points, every raw sample (throttled ones too, flagged) and the analysis.
//
// Layout (schema "mlalab.ab.results/1"; "schema_notes" in the file says how figures derive):
//   {"schema", "schema_notes", "started_utc", "elapsed_s", "partial", "partial_reason", "seed",
//    "command_line",
//    "experiment": {"name", "hypothesis", "backend", "source_path",
//                   "baseline": ARM, "variants": [ARM],
//                   "sweep": {"layout", "heads", "page_size", "concurrency",
//                             "context": {"kind", "length", "min_length", "max_length",
//                                         "sigma", "seed"}},
//                   "measure": {"launches_per_sample", "max_minutes", "throttle_fraction"},
//                   "stats": {"min_effect_pct", "alpha", "resamples", "min_rounds",
//                             "max_rounds", "time_budget_s", "seed", "correction", "family"},
//                   "source_text"},
//    "environment": {"backend", "gpu", "sm_count", "sm_clock_mhz", "max_sm_clock_mhz",
//                    "mem_clock_mhz", "driver", "cuda_runtime", "commit", "host"},
//    "arms": [{"name", "role", "config_text", "code_hash", "valid", "invalid_reason",
//              "config": ARM}],
//    "points": [{"concurrency", "context_lengths", "splits", "rounds", "throttled_samples",
//                "stop_reason", "stop_text", "elapsed_s"}],
//    "analysis": null | {"direction", "correction_note",
//                        "noise": [{"concurrency", "a_a": CHANGE, "band_pct",
//                                   "baseline_median"}],
//                        "variants": [{"name", "verdict", "faster_at", "slower_at",
//                                      "points": [{"concurrency", "change": CHANGE,
//                                                  "threshold_pct", "p_value", "p_adjusted",
//                                                  "verdict", "more_rounds",
//                                                  "variant_median"}]}]},
//    "samples": [{"point", "round", "order", "arm", "value", "time_us", "sm_clock_mhz",
//                 "throttled"}]}
//   ARM    = {"name", "prediction_pct", "kind": "kernel", "variant", "split", "cpu_threads"}
//          | {"name", "prediction_pct", "kind": "command", "command", "env", "metric_regex",
//             "direction", "timeout_s"}
//   CHANGE = {"paired_rounds", "change_pct", "lower_pct", "upper_pct"}
// Numbers that are not finite are null: a change or median without samples (NaN), an interval
// end that is unbounded (lower −∞, upper +∞). "point" and "arm" of a sample index "points"
// and "arms". The samples come one per line, for grep and diff.
#include <filesystem>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "ab/run_record.h"
#include "report/report_writer.h"

namespace mlalab::report {

inline constexpr std::string_view kResultsSchema = "mlalab.ab.results/1";

nlohmann::ordered_json results_json(const ab::RunRecord& record);

// The record back from results.json, every field above. Throws std::runtime_error naming the
// field on a file of another schema or a missing or mistyped field.
ab::RunRecord record_from_json(const nlohmann::json& json);
ab::RunRecord read_results_json(const std::filesystem::path& path);

// Parses a JSON file; throws std::runtime_error naming the file when it cannot be opened or
// is not valid JSON. Shared by every reader of the lab's files.
nlohmann::json read_json_file(const std::filesystem::path& path);

// The JSON of one declared arm (ARM above), shared with fingerprint.json.
nlohmann::ordered_json arm_json(const ab::Arm& arm);
ab::Arm arm_from_json(const nlohmann::json& json);

class ResultsJson final : public ReportWriter {
 public:
  std::string file_name() const override { return "results.json"; }
  void write(const ab::RunRecord& record, std::ostream& out) const override;
};

}  // namespace mlalab::report
