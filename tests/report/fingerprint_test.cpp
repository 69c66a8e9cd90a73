#include "report/fingerprint.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "report/synthetic_record.h"

namespace mlalab::report {
namespace {

const Fingerprint& recorded() {
  static const Fingerprint fingerprint = fingerprint_of(testing::synthetic_record());
  return fingerprint;
}

std::vector<std::string> lines(const std::vector<Difference>& differences) {
  std::vector<std::string> text;
  for (const Difference& difference : differences) {
    text.push_back((difference.blocking ? "" : "note: ") + difference_line(difference));
  }
  return text;
}

FingerprintArm* arm_named(Fingerprint& fingerprint, const std::string& name) {
  for (FingerprintArm& arm : fingerprint.arms) {
    if (arm.name == name) return &arm;
  }
  return nullptr;
}

TEST(Fingerprint, HoldsTheEnvironmentAndEveryArm) {
  const Fingerprint& fingerprint = recorded();
  EXPECT_EQ(fingerprint.gpu, "NVIDIA H200");
  EXPECT_EQ(fingerprint.driver, "570.86.15 (CUDA 12.8)");
  EXPECT_EQ(fingerprint.cuda_runtime, "13.0");
  EXPECT_EQ(fingerprint.commit, "0123456789ab");
  EXPECT_EQ(fingerprint.max_sm_clock_mhz, 1980);
  ASSERT_EQ(fingerprint.arms.size(), 7u);
  EXPECT_EQ(fingerprint.arms[2].config.at("variant"), "h16_t16_w8_s2");
  EXPECT_EQ(fingerprint.arms[2].config.at("split"), "heuristic");
  EXPECT_EQ(fingerprint.arms[2].code_hash.size(), 64u);
  EXPECT_FALSE(fingerprint.arms[6].valid);
}

TEST(Fingerprint, RoundTripsThroughItsFile) {
  const auto path = std::filesystem::path(::testing::TempDir()) / "mlalab_fingerprint_test.json";
  {
    std::ofstream out(path);
    write_fingerprint(recorded(), out);
  }
  const Fingerprint back = read_fingerprint(path);
  std::filesystem::remove(path);
  EXPECT_EQ(fingerprint_json(back), fingerprint_json(recorded()));
  EXPECT_TRUE(compare_fingerprints(recorded(), back).empty());
}

TEST(Fingerprint, ReadRefusesAnotherSchema) {
  auto json = fingerprint_json(recorded());
  json["schema"] = "mlalab.ab.results/1";
  EXPECT_THROW(fingerprint_from_json(json), std::runtime_error);
  json["schema"] = std::string(kFingerprintSchema);
  json["arms"][0].erase("code_hash");
  EXPECT_THROW(fingerprint_from_json(json), std::runtime_error);
}

TEST(CompareFingerprints, AcceptsIdentical) {
  EXPECT_TRUE(compare_fingerprints(recorded(), recorded()).empty());
}

TEST(CompareFingerprints, FlagsAChangedCodeHash) {
  Fingerprint current = recorded();
  arm_named(current, "8 warps")->code_hash = std::string(64, 'f');
  const auto differences = compare_fingerprints(recorded(), current);
  ASSERT_EQ(differences.size(), 1u) << ::testing::PrintToString(lines(differences));
  EXPECT_TRUE(differences[0].blocking);
  EXPECT_EQ(differences[0].what, "arm 8 warps: code hash");
  EXPECT_EQ(differences[0].current, std::string(64, 'f'));
}

TEST(CompareFingerprints, FlagsAChangedConfig) {
  Fingerprint current = recorded();
  arm_named(current, "3 stages")->config["split"] = "fixed:4";
  arm_named(current, "8 warps")->config.erase("cpu_threads");
  const auto differences = compare_fingerprints(recorded(), current);
  EXPECT_EQ(lines(differences),
            (std::vector<std::string>{
                "arm 8 warps: config cpu_threads: recorded 0, current absent",
                "arm 3 stages: config split: recorded heuristic, current fixed:4"}));
}

TEST(CompareFingerprints, FlagsAnotherGpuAndNotesACommit) {
  Fingerprint current = recorded();
  current.gpu = "NVIDIA H100 80GB HBM3";
  current.sm_count = 132;
  current.max_sm_clock_mhz = 1755;
  current.commit = "fedcba987654";
  const auto differences = compare_fingerprints(recorded(), current);
  EXPECT_EQ(lines(differences),
            (std::vector<std::string>{
                "GPU: recorded NVIDIA H200, current NVIDIA H100 80GB HBM3",
                "peak SM clock: recorded 1980 MHz, current 1755 MHz",
                "note: commit: recorded 0123456789ab, current fedcba987654"}));
}

TEST(CompareFingerprints, NoGpuCannotCompare) {
  Fingerprint current = recorded();
  current.gpu = "no GPU: cannot compare (no CUDA device)";
  current.sm_count = 0;
  current.max_sm_clock_mhz = -1;
  current.mem_clock_mhz = -1;
  current.driver.clear();
  const auto differences = compare_fingerprints(recorded(), current);
  ASSERT_EQ(differences.size(), 1u);
  EXPECT_EQ(difference_line(differences[0]),
            "GPU: recorded NVIDIA H200, current no GPU: cannot compare (no CUDA device)");
}

TEST(CompareFingerprints, MissingAndExtraArmsAndUnknownsAreSkipped) {
  Fingerprint current = recorded();
  current.arms.erase(current.arms.begin() + 2);       // "8 warps" gone
  current.arms[1].config["split"] = "fixed:2";        // A′ is not compared
  arm_named(current, "same code")->config.clear();    // config not known now: not compared
  arm_named(current, "same code")->code_hash.clear(); // hash not known now: not compared
  FingerprintArm extra = current.arms.back();
  extra.name = "new arm";
  current.arms.push_back(extra);
  const auto differences = compare_fingerprints(recorded(), current);
  EXPECT_EQ(lines(differences),
            (std::vector<std::string>{
                "arm 8 warps: presence: recorded h16_t16_w8_s2 heuristic, current absent",
                "arm new arm: presence: recorded absent, current h64_t64_w8_s4 heuristic"}));
}

TEST(CompareFingerprints, NotesAHashThatWasNotRecorded) {
  Fingerprint old_run = recorded();
  arm_named(old_run, "3 stages")->code_hash.clear();
  const auto differences = compare_fingerprints(old_run, recorded());
  ASSERT_EQ(differences.size(), 1u);
  EXPECT_FALSE(differences[0].blocking);
  EXPECT_EQ(differences[0].what, "arm 3 stages: code hash");
  EXPECT_EQ(differences[0].recorded, "none");
}

}  // namespace
}  // namespace mlalab::report
