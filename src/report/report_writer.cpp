#include "report/report_writer.h"

#include <fmt/format.h>

#include <exception>
#include <stdexcept>
#include <system_error>

#include "core/atomic_file.h"
#include "report/change_svg.h"
#include "report/fingerprint.h"
#include "report/markdown_report.h"
#include "report/results_json.h"
#include "report/throughput_svg.h"

namespace mlalab::report {

std::vector<std::unique_ptr<ReportWriter>> all_writers() {
  std::vector<std::unique_ptr<ReportWriter>> writers;
  writers.push_back(std::make_unique<MarkdownReport>());
  writers.push_back(std::make_unique<ResultsJson>());
  writers.push_back(std::make_unique<ThroughputSvg>());
  writers.push_back(std::make_unique<ChangeSvg>());
  writers.push_back(std::make_unique<FingerprintJson>());
  return writers;
}

void write_file(const ReportWriter& writer, const ab::RunRecord& record,
                const std::filesystem::path& dir) {
  write_file_atomically(dir / writer.file_name(),
                        [&](std::ostream& out) { writer.write(record, out); });
}

void write_report(const ab::RunRecord& record, const std::filesystem::path& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    throw std::runtime_error(
        fmt::format("cannot create the report folder {}: {}", dir.string(), error.message()));
  }
  std::exception_ptr first_failure;
  for (const auto& writer : all_writers()) {
    try {
      write_file(*writer, record, dir);
    } catch (...) {
      if (!first_failure) first_failure = std::current_exception();
    }
  }
  if (first_failure) std::rethrow_exception(first_failure);
}

}  // namespace mlalab::report
