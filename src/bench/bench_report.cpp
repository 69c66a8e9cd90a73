#include "bench/bench_report.h"

#include <algorithm>

namespace mlalab::bench {

std::string BenchRow::status_text() const {
  const auto with_detail = [this](const char* label) {
    return detail.empty() ? std::string(label) : std::string(label) + ": " + detail;
  };
  switch (status) {
    case RowStatus::kOk: return detail.empty() ? "ok" : "ok (" + detail + ")";
    case RowStatus::kInvalid: return with_detail("INVALID");
    case RowStatus::kInfeasible: return with_detail("infeasible");
    case RowStatus::kError: return with_detail("error");
  }
  return "?";
}

bool BenchReport::any_failed() const {
  return std::any_of(rows.begin(), rows.end(), [](const BenchRow& row) {
    return row.status == RowStatus::kInvalid || row.status == RowStatus::kError;
  });
}

}  // namespace mlalab::bench
