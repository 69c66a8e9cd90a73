#include "bench/timeline_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>

#include "core/median.h"

namespace mlalab::bench {
namespace {

constexpr double kNanosPerMicro = 1000.0;

std::uint64_t first_start_ns(const std::vector<kernels::CtaTimeline>& records) {
  std::uint64_t first = std::numeric_limits<std::uint64_t>::max();
  for (const auto& cta : records) first = std::min(first, cta.start_ns);
  return first;
}

int recorded_parts(const kernels::CtaTimeline& cta) {
  return std::clamp(cta.parts, 0, kernels::kTimelineParts);
}

double micros_since(std::uint64_t ns, std::uint64_t origin_ns) {
  return static_cast<double>(ns - origin_ns) / kNanosPerMicro;
}

std::uint64_t end_ns(const kernels::CtaTimeline& cta) {
  const int parts = recorded_parts(cta);
  return parts > 0 ? cta.part[parts - 1].end_ns : cta.start_ns;
}

}  // namespace

TimelineSummary summarize_timeline(const std::vector<kernels::CtaTimeline>& records) {
  TimelineSummary summary;
  if (records.empty()) return summary;
  const std::uint64_t origin = first_start_ns(records);
  std::vector<double> ends;
  ends.reserve(records.size());
  for (const auto& cta : records) {
    const double end = micros_since(end_ns(cta), origin);
    ends.push_back(end);
    summary.last_start_us = std::max(summary.last_start_us, micros_since(cta.start_ns, origin));
    PartsGroup& group = summary.by_parts[cta.parts];
    group.mean_end_us += end;  // a sum until divided below
    group.max_end_us = std::max(group.max_end_us, end);
    ++group.ctas;
    if (cta.parts > kernels::kTimelineParts) ++summary.truncated_ctas;
  }
  for (auto& [parts, group] : summary.by_parts) group.mean_end_us /= group.ctas;
  summary.ctas = static_cast<int>(records.size());
  summary.min_end_us = *std::min_element(ends.begin(), ends.end());
  summary.max_end_us = *std::max_element(ends.begin(), ends.end());
  summary.median_end_us = median(std::move(ends));
  return summary;
}

std::string timeline_summary_text(const TimelineSummary& summary) {
  if (summary.ctas == 0) return "no CTA recorded";
  std::string text = fmt::format(
      "{} CTAs: started within {:.1f} µs, ended at {:.1f} / {:.1f} / {:.1f} µs (min / median / "
      "max); by parts:",
      summary.ctas, summary.last_start_us, summary.min_end_us, summary.median_end_us,
      summary.max_end_us);
  for (const auto& [parts, group] : summary.by_parts) {
    text += fmt::format(" {}: {} CTAs, mean {:.1f}, max {:.1f};", parts, group.ctas,
                        group.mean_end_us, group.max_end_us);
  }
  text.pop_back();
  if (summary.truncated_ctas > 0) {
    text += fmt::format(" ({} CTAs had more than {} parts: the first {} recorded)",
                        summary.truncated_ctas, kernels::kTimelineParts, kernels::kTimelineParts);
  }
  return text;
}

nlohmann::json timeline_json(const std::vector<BenchRow>& rows) {
  nlohmann::json out = nlohmann::json::array();
  for (const BenchRow& row : rows) {
    if (row.timeline.empty()) continue;
    const std::uint64_t origin = first_start_ns(row.timeline);
    nlohmann::json ctas = nlohmann::json::array();
    for (std::size_t index = 0; index < row.timeline.size(); ++index) {
      const kernels::CtaTimeline& cta = row.timeline[index];
      nlohmann::json parts = nlohmann::json::array();
      for (int part = 0; part < recorded_parts(cta); ++part) {
        const kernels::TimelinePart& record = cta.part[part];
        parts.push_back({{"sequence", record.sequence},
                         {"steps", record.steps},
                         {"partial", record.part_slot >= 0},
                         {"end_us", micros_since(record.end_ns, origin)}});
      }
      ctas.push_back({{"cta", index},
                      {"sm", cta.sm},
                      {"start_us", micros_since(cta.start_ns, origin)},
                      {"parts_total", cta.parts},
                      {"parts", std::move(parts)}});
    }
    const TimelineSummary summary = summarize_timeline(row.timeline);
    nlohmann::json by_parts = nlohmann::json::object();
    for (const auto& [parts, group] : summary.by_parts) {
      by_parts[std::to_string(parts)] = {{"ctas", group.ctas},
                                         {"mean_end_us", group.mean_end_us},
                                         {"max_end_us", group.max_end_us}};
    }
    out.push_back({{"variant", row.variant},
                   {"layout", row.layout},
                   {"heads", row.heads},
                   {"batch", row.batch},
                   {"context", row.context},
                   {"page_size", row.page_size},
                   {"splits", row.splits},
                   {"workers", row.workers},
                   {"us", row.us},
                   {"summary",
                    {{"ctas", summary.ctas},
                     {"last_start_us", summary.last_start_us},
                     {"min_end_us", summary.min_end_us},
                     {"median_end_us", summary.median_end_us},
                     {"max_end_us", summary.max_end_us},
                     {"by_parts", std::move(by_parts)}}},
                   {"ctas", std::move(ctas)}});
  }
  return out;
}

}  // namespace mlalab::bench
