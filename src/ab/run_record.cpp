#include "ab/run_record.h"

#include <algorithm>
#include <map>

namespace mlalab::ab {
namespace {

// Which way is better for an arm's metric: kernel arms report throughput.
Direction direction_of(const Arm& arm) {
  if (const auto* command = std::get_if<CommandArm>(&arm.config)) return command->direction;
  return Direction::kHigherIsBetter;
}

}  // namespace

SweepSamples sweep_samples(const RunRecord& record) {
  SweepSamples sweep;
  if (record.arms.empty()) return sweep;
  const auto baseline = std::find_if(record.arms.begin(), record.arms.end(),
                                     [](const ArmRecord& arm) {
                                       return arm.role == ArmRole::kBaseline;
                                     });
  sweep.direction = direction_of(baseline != record.arms.end() ? baseline->arm
                                                               : record.experiment.baseline);

  // Where each arm's samples go: the baseline, its repeat, or the i-th valid variant. An
  // INVALID variant is left out: a wrong kernel's speed is no evidence (its verdict row says
  // INVALID, from its ArmRecord).
  enum class Slot { kNone, kBaseline, kRepeat, kVariant };
  std::vector<Slot> slots(record.arms.size(), Slot::kNone);
  std::vector<int> variant_index(record.arms.size(), -1);
  for (std::size_t a = 0; a < record.arms.size(); ++a) {
    const ArmRecord& arm = record.arms[a];
    if (arm.role == ArmRole::kBaseline) {
      slots[a] = Slot::kBaseline;
    } else if (arm.role == ArmRole::kBaselineRepeat) {
      slots[a] = Slot::kRepeat;
    } else if (arm.valid) {
      slots[a] = Slot::kVariant;
      variant_index[a] = static_cast<int>(sweep.variant_names.size());
      sweep.variant_names.push_back(arm.name);
    }
  }

  // Rounds per point: the rounds run, or more if samples say so; a point without any sample
  // is left out (it was never measured).
  std::map<int, std::size_t> rounds_of_point;
  for (const Sample& sample : record.samples) {
    auto& rounds = rounds_of_point[sample.point];
    rounds = std::max(rounds, static_cast<std::size_t>(sample.round) + 1);
  }
  std::map<int, std::size_t> point_slot;
  for (auto& [point, rounds] : rounds_of_point) {
    if (point < 0 || point >= static_cast<int>(record.points.size())) continue;
    rounds = std::max(rounds, static_cast<std::size_t>(record.points[point].rounds));
    PointSamples samples{.concurrency = record.points[point].concurrency,
                         .baseline = RoundSamples(rounds),
                         .baseline_repeat = RoundSamples(rounds),
                         .variants = std::vector<RoundSamples>(sweep.variant_names.size(),
                                                               RoundSamples(rounds))};
    point_slot[point] = sweep.points.size();
    sweep.points.push_back(std::move(samples));
  }

  for (const Sample& sample : record.samples) {
    if (sample.throttled || sample.arm < 0 ||
        sample.arm >= static_cast<int>(record.arms.size())) {
      continue;
    }
    const auto found = point_slot.find(sample.point);
    if (found == point_slot.end()) continue;
    PointSamples& point = sweep.points[found->second];
    const ArmRecord& arm = record.arms[sample.arm];
    // A variant measured the other way round than the baseline is turned around, so that every
    // arm of the sweep speaks the baseline's direction.
    const double value =
        direction_of(arm.arm) == sweep.direction ? sample.value : 1.0 / sample.value;
    switch (slots[sample.arm]) {
      case Slot::kBaseline:
        point.baseline[sample.round] = value;
        break;
      case Slot::kRepeat:
        point.baseline_repeat[sample.round] = value;
        break;
      case Slot::kVariant:
        point.variants[variant_index[sample.arm]][sample.round] = value;
        break;
      case Slot::kNone:
        break;
    }
  }
  return sweep;
}

}  // namespace mlalab::ab
