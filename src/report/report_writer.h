#pragma once
// The A/B lab's report: five files written from one ab::RunRecord (the lab's result model, and
// nothing below it) by printers that share one interface, so the runner only calls
// write_report and a new format is one more ReportWriter.
//   report.md         what was tested, why, how, the verdicts and how to reproduce them
//   results.json      the whole record, every raw sample included (results_json.h)
//   throughput.svg    throughput against concurrency per arm, with the intervals
//   change.svg        each variant's change against the baseline in %, with intervals,
//                     thresholds, predictions and verdicts (change_svg.h)
//   fingerprint.json  what must match for a rerun to measure the same thing (fingerprint.h)
#include <filesystem>
#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "ab/run_record.h"

namespace mlalab::report {

class ReportWriter {
 public:
  virtual ~ReportWriter() = default;
  virtual std::string file_name() const = 0;
  virtual void write(const ab::RunRecord& record, std::ostream& out) const = 0;
};

// The five writers, in the order write_report runs them.
std::vector<std::unique_ptr<ReportWriter>> all_writers();

// Writes the writer's file into `dir` whole or not at all (write_file_atomically): the previous
// version stays until the new one is complete. Throws std::runtime_error naming the path when
// the file cannot be written.
void write_file(const ReportWriter& writer, const ab::RunRecord& record,
                const std::filesystem::path& dir);

// Creates `dir` if needed and writes every file of all_writers(). The runner calls it at the
// end of a run, and during one (periodically, and when interrupted) with record.partial set.
// A writer that fails does not stop the others: every file that can be written is, and then
// the first failure is rethrown.
void write_report(const ab::RunRecord& record, const std::filesystem::path& dir);

}  // namespace mlalab::report
