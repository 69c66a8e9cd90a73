#pragma once
// results.json: the whole RunRecord, so that another tool can recompute every figure of the
// report: the experiment (every setting and the file as read), the environment, the arms, the
// sweep points, every raw sample (throttled ones too, flagged) and the analysis.
//
// Layout (schema "mlalab.ab.results/3"; "schema_notes" in the file says how figures derive):
//   {"schema", "schema_notes", "started_utc", "elapsed_s", "partial", "partial_reason", "seed",
//    "command_line",
//    "experiment": {"name", "hypothesis", "backend", "source_path",
//                   "baseline": ARM, "variants": [ARM],
//                   "sweep": {"layout", "heads", "page_size", "concurrency",
//                             "context": {"kind", "length", "min_length", "max_length",
//                                         "sigma", "seed"}},
//                   "measure": {"launches_per_sample", "max_minutes", "throttle_fraction",
//                               "heat_ms"},
//                   "stats": {"min_effect_pct", "alpha", "min_rounds", "max_rounds",
//                             "time_budget_s", "seed", "correction", "family"},
//                   "source_text"},
//    "environment": {"backend", "gpu", "sm_count", "sm_clock_mhz", "max_sm_clock_mhz",
//                    "mem_clock_mhz", "power_limit_w", "driver", "cuda_runtime", "commit", "host",
//                    "cpu_model", "hardware_threads", "usable_cpus",
//                    "load_at_start": LOAD, "load_at_end": LOAD},
//    "arms": [{"name", "role", "config_text", "code_hash", "valid", "invalid_reason",
//              "config": ARM}],
//    "points": [{"concurrency", "context_lengths", "splits", "resolved_configs" (what each
//                tuned arm ran there, by arm; null without tuned arms), "rounds",
//                "throttled_samples", "stop_reason", "stop_text", "elapsed_s"}],
//    "analysis": null | {"direction", "correction_note",
//                        "looks": [{"rounds", "alpha_share"}],
//                        "noise": [{"concurrency", "a_a": CHANGE, "band_pct",
//                                   "baseline_median", "p_check", "flagged"}],
//                        "variants": [{"name", "verdict", "faster_at", "slower_at",
//                                      "points": [{"concurrency", "change": CHANGE,
//                                                  "threshold_pct", "p_value", "p_adjusted",
//                                                  "p_within", "looks", "mde_pct", "verdict",
//                                                  "rounds_to_settle",
//                                                  "variant_median"}]}]},
//    "samples": [{"point", "round", "order", "arm", "value", "time_us", "sm_clock_mhz",
//                 "power_w", "throttled"}]}
//   ARM    = {"name", "prediction_pct", "kind": "kernel", "variant", "split", "cpu_threads",
//             "table" (a tuned arm's tuning table, else null)}
//          | {"name", "prediction_pct", "kind": "command", "command", "env", "metric",
//             "direction", "timeout_s"}
//   CHANGE = {"paired_rounds", "change_pct", "lower_pct", "upper_pct", "standard_error_log",
//             "degrees_of_freedom"}
//   LOAD   = {"load_1min", "load_5min", "load_15min", "other_cpu_share", "share_window_s"}
// Numbers that are not finite are null: a change or median without samples (NaN), an interval
// end that is unbounded (lower −∞, upper +∞), a standard error or MDE without a testable
// estimate (+∞). So is every field that is unknown or does not apply, never a placeholder such
// as 0, -1 or "": the GPU's fields without a GPU run, "split" on the cpu backend and
// "cpu_threads" on the cuda backend, the kernel sweep settings ("layout", "heads", "page_size",
// "context", "launches_per_sample", a point's "context_lengths") of command arms,
// "throttle_fraction" where no clock is read, the context fields its kind does not use, a
// point's "splits" without a kernel baseline, a sample's "time_us" for commands and its
// "sm_clock_mhz" and "power_w" where none was read, an empty "code_hash", "invalid_reason",
// "partial_reason" or "source_path". "point" and "arm" of a sample index "points" and "arms".
// The samples come one per line, for grep and diff. "power_w" and "power_limit_w" are absent
// from files written before they were recorded, and read as unknown; "heat_ms" likewise, and
// reads as 0 (no heat: there was none before it).
//
// Older schemas still read, but not their analysis: it came from the earlier statistics (a
// bootstrap of medians against a threshold of max(A/A band, min_effect_pct)), with other
// fields and rules, so record_from_json leaves `analysis` empty (std::nullopt) and their
// samples can be analysed again; their settings' "resamples" is not read and their
// "precision_reached" stops read as settled.
//   Schema 2: the layout above but for the analysis and "resamples".
//   Schema 1, before the host's CPU and load were recorded: the same, and the record's
//   placeholders instead of nulls; its CPU and load read as unknown.
#include <filesystem>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "ab/run_record.h"
#include "report/report_writer.h"

namespace mlalab::report {

inline constexpr std::string_view kResultsSchema = "mlalab.ab.results/3";
inline constexpr std::string_view kResultsSchemaV2 = "mlalab.ab.results/2";
inline constexpr std::string_view kResultsSchemaV1 = "mlalab.ab.results/1";

nlohmann::ordered_json results_json(const ab::RunRecord& record);

// The record back from results.json, every field above (of an older schema: as described
// above, without the analysis). Throws std::runtime_error naming the
// field on a file of another schema or a missing or mistyped field.
ab::RunRecord record_from_json(const nlohmann::json& json);
ab::RunRecord read_results_json(const std::filesystem::path& path);

// Parses a JSON file; throws std::runtime_error naming the file when it cannot be opened or
// is not valid JSON. Shared by every reader of the lab's files.
nlohmann::json read_json_file(const std::filesystem::path& path);

// The record's conventions for "unknown or not applicable" (an empty text; a count, clock or
// time that is not positive) as JSON: null. Shared with fingerprint.json.
nlohmann::ordered_json text_or_null(const std::string& text);
nlohmann::ordered_json positive_or_null(double value);
nlohmann::ordered_json positive_or_null(int value);
// A recorded backend by its name (core/backend.h), null when not recorded.
nlohmann::ordered_json backend_or_null(const std::optional<Backend>& backend);

// The JSON of one declared arm (ARM above) of an experiment on `backend`, which decides the
// fields that apply.
nlohmann::ordered_json arm_json(const ab::Arm& arm, Backend backend);
ab::Arm arm_from_json(const nlohmann::json& json);

class ResultsJson final : public ReportWriter {
 public:
  std::string file_name() const override { return "results.json"; }
  void write(const ab::RunRecord& record, std::ostream& out) const override;
};

}  // namespace mlalab::report
