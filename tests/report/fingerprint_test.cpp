#include "report/fingerprint.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "report/results_json.h"
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
  ASSERT_EQ(fingerprint.arms.size(), 8u);
  EXPECT_EQ(fingerprint.arms[2].config.at("variant"), "h16_t16_w8_s2");
  EXPECT_EQ(fingerprint.arms[2].config.at("split"), "heuristic");
  EXPECT_EQ(fingerprint.arms[2].code_hash.size(), 64u);
  EXPECT_FALSE(fingerprint.arms[6].valid);  // "broken"
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
  EXPECT_TRUE(compare_fingerprints(recorded(), back).differences.empty());
}

TEST(Fingerprint, ReadingARunsResultsSaysWhereItsFingerprintIs) {
  const auto folder = std::filesystem::path(::testing::TempDir()) / "mlalab_fingerprint_results";
  std::filesystem::create_directories(folder);
  std::ofstream(folder / "results.json") << R"({"schema": "mlalab.ab.results/3"})";
  try {
    read_fingerprint(folder / "results.json");
    ADD_FAILURE() << "a results.json read as a fingerprint";
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    EXPECT_TRUE(message.starts_with((folder / "results.json").string() + ": schema")) << message;
    EXPECT_NE(message.find("this is a run's results; its fingerprint is " +
                           (folder / "fingerprint.json").string()),
              std::string::npos)
        << message;
  }
  std::filesystem::remove_all(folder);
}

TEST(Fingerprint, ReadRefusesAnotherSchema) {
  auto json = fingerprint_json(recorded());
  json["schema"] = "mlalab.ab.results/1";
  EXPECT_THROW(fingerprint_from_json(json), std::runtime_error);
  json["schema"] = std::string(kFingerprintSchema);
  json["arms"][0].erase("code_hash");
  EXPECT_THROW(fingerprint_from_json(json), std::runtime_error);
}

TEST(Fingerprint, ReadsTheBackendByNameAndRefusesAnUnknownOne) {
  auto json = fingerprint_json(recorded());
  json["backend"] = "cpu";
  EXPECT_EQ(fingerprint_from_json(json).backend, Backend::kCpu);
  json["backend"] = nullptr;
  EXPECT_EQ(fingerprint_from_json(json).backend, std::nullopt);
  json["backend"] = "tpu";
  try {
    fingerprint_from_json(json);
    ADD_FAILURE() << "an unknown backend was read";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("backend 'tpu' is none of cuda, cpu, none"),
              std::string::npos)
        << error.what();
  }
}

TEST(CompareFingerprints, AcceptsIdentical) {
  EXPECT_TRUE(compare_fingerprints(recorded(), recorded()).differences.empty());
}

TEST(CompareFingerprints, FlagsAChangedCodeHash) {
  Fingerprint current = recorded();
  arm_named(current, "8 warps")->code_hash = std::string(64, 'f');
  const auto differences = compare_fingerprints(recorded(), current).differences;
  ASSERT_EQ(differences.size(), 1u) << ::testing::PrintToString(lines(differences));
  EXPECT_TRUE(differences[0].blocking);
  EXPECT_EQ(differences[0].what, "arm 8 warps: code hash");
  EXPECT_EQ(differences[0].current, std::string(64, 'f'));
}

TEST(CompareFingerprints, ComparesBinaryHashesOnlyWhereBothRunsHaveThem) {
  Fingerprint recorded_run = recorded();
  arm_named(recorded_run, "8 warps")->binary_hash = std::string(64, 'b');
  // verify's side: no run, no binaries: said, not a difference.
  const Comparison here = compare_fingerprints(recorded_run, recorded());
  EXPECT_TRUE(here.differences.empty()) << ::testing::PrintToString(lines(here.differences));
  EXPECT_NE(::testing::PrintToString(here.not_compared)
                .find("the compiled Triton binaries of 1 arm (a run compiles them"),
            std::string::npos)
      << ::testing::PrintToString(here.not_compared);
  // Two runs: a different binary is a difference to note, not a refusal (the code hash, which
  // covers the source and the compiler versions, decides).
  Fingerprint other_run = recorded_run;
  arm_named(other_run, "8 warps")->binary_hash = std::string(64, 'c');
  const auto differences = compare_fingerprints(recorded_run, other_run).differences;
  ASSERT_EQ(differences.size(), 1u) << ::testing::PrintToString(lines(differences));
  EXPECT_EQ(differences[0].what, "arm 8 warps: binary hash");
  EXPECT_FALSE(differences[0].blocking);
  // And it survives the file.
  EXPECT_EQ(fingerprint_from_json(fingerprint_json(recorded_run)).arms[2].binary_hash,
            std::string(64, 'b'));
}

TEST(CompareFingerprints, FlagsAChangedConfig) {
  Fingerprint current = recorded();
  arm_named(current, "3 stages")->config["split"] = "fixed:4";
  arm_named(current, "8 warps")->config.erase("variant");
  const auto differences = compare_fingerprints(recorded(), current).differences;
  EXPECT_EQ(lines(differences),
            (std::vector<std::string>{
                "arm 8 warps: config variant: recorded h16_t16_w8_s2, current absent",
                "arm 3 stages: config split: recorded heuristic, current fixed:4"}));
}

TEST(Fingerprint, RecordsTheSweepEveryArmWasMeasuredOn) {
  const ab::RunRecord record = testing::synthetic_record();
  EXPECT_EQ(recorded().sweep.at("layout"), std::string(name_of(record.experiment.sweep.layout)));
  EXPECT_EQ(recorded().sweep.at("heads"), std::to_string(record.experiment.sweep.heads));
  EXPECT_EQ(recorded().sweep.at("concurrency"), fmt::format("{}", fmt::join(
                                                    record.experiment.sweep.concurrency, ",")));
  EXPECT_EQ(recorded().sweep.at("launches_per_sample"),
            std::to_string(record.experiment.measure.launches_per_sample));
  EXPECT_EQ(recorded().sweep.size(), 6u);  // and page_size, context
  ab::Experiment lognormal = record.experiment;
  lognormal.sweep.context = {.kind = ab::ContextSpec::Kind::kLogNormal, .length = 2048,
                             .min_length = 64, .max_length = 131072, .sigma = 1.5, .seed = 7};
  EXPECT_EQ(sweep_fields(lognormal).at("context"),
            "lognormal median 2048 sigma 1.5 [64, 131072] seed 7");
}

TEST(CompareFingerprints, FlagsAChangedSweep) {
  Fingerprint current = recorded();
  const std::string heads = *current.sweep.at("heads");
  current.sweep["heads"] = "128";
  current.sweep["context"] = "uniform [1024, 8192] seed 7";
  const Comparison comparison = compare_fingerprints(recorded(), current);
  EXPECT_EQ(lines(comparison.differences),
            (std::vector<std::string>{
                "sweep context: recorded " + *recorded().sweep.at("context") +
                    ", current uniform [1024, 8192] seed 7",
                "sweep heads: recorded " + heads + ", current 128"}));
}

// A fingerprint written before the sweep was recorded cannot say what it ran on: verify says
// so rather than calling the sweep verified.
TEST(CompareFingerprints, ASweepNotRecordedIsNotCompared) {
  Fingerprint before = recorded();
  before.sweep.clear();
  const Comparison comparison = compare_fingerprints(before, recorded());
  EXPECT_TRUE(comparison.differences.empty());
  EXPECT_EQ(std::count(comparison.not_compared.begin(), comparison.not_compared.end(),
                       "the sweep (not recorded)"),
            1);
  // Without the experiment file the current sweep is unknown: nothing about it either way.
  Fingerprint unknown_now = recorded();
  unknown_now.sweep.clear();
  const Comparison without_file = compare_fingerprints(recorded(), unknown_now);
  EXPECT_EQ(std::count(without_file.compared.begin(), without_file.compared.end(), "the sweep"),
            0);
  EXPECT_TRUE(without_file.differences.empty());
}

TEST(CompareFingerprints, FlagsAnotherGpuAndNotesACommit) {
  Fingerprint current = recorded();
  current.gpu = "NVIDIA H100 80GB HBM3";
  current.sm_count = 132;
  current.max_sm_clock_mhz = 1755;
  current.commit = "fedcba987654";
  const auto differences = compare_fingerprints(recorded(), current).differences;
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
  const auto differences = compare_fingerprints(recorded(), current).differences;
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
  const auto differences = compare_fingerprints(recorded(), current).differences;
  EXPECT_EQ(lines(differences),
            (std::vector<std::string>{
                "arm 8 warps: presence: recorded h16_t16_w8_s2 heuristic, current absent",
                "arm new arm: presence: recorded absent, current h32_t16_w4_s2 heuristic"}));
}

TEST(CompareFingerprints, NotesAHashThatWasNotRecorded) {
  Fingerprint old_run = recorded();
  arm_named(old_run, "3 stages")->code_hash.clear();
  const auto differences = compare_fingerprints(old_run, recorded()).differences;
  ASSERT_EQ(differences.size(), 1u);
  EXPECT_FALSE(differences[0].blocking);
  EXPECT_EQ(differences[0].what, "arm 3 stages: code hash");
  EXPECT_EQ(differences[0].recorded, "none");
}

// ---- The CPU backend and command arms --------------------------------------------------------

// A made-up SHA-256 in hex, standing for the CPU backend's.
const std::string kCpuCodeHash = std::string(32, 'c') + std::string(32, '0');

ab::ArmRecord recorded_arm(std::string name, ab::ArmRole role, ab::Arm arm, std::string hash) {
  return {.name = std::move(name),
          .role = role,
          .arm = arm,
          .config_text = ab::arm_config_text(arm),
          .code_hash = std::move(hash),
          .valid = true,
          .invalid_reason = {}};
}

using testing::two_thread_host;

// The CPU demo's arms: 2 threads against 1, both with the CPU backend's code hash.
ab::RunRecord cpu_record() {
  const auto cpu_arm = [](std::string name, int threads) {
    return ab::Arm{.name = std::move(name),
                   .prediction_pct = std::nullopt,
                   .config = ab::KernelArm{.variant = ab::kCpuVariant, .split = {},
                                           .cpu_threads = threads}};
  };
  ab::RunRecord record;
  record.experiment.name = "cpu-demo";
  record.experiment.backend = Backend::kCpu;
  record.experiment.baseline = cpu_arm("baseline", 2);
  record.experiment.variants = {cpu_arm("1 thread", 1)};
  record.environment = two_thread_host(Backend::kCpu);
  record.arms = {
      recorded_arm("baseline", ab::ArmRole::kBaseline, record.experiment.baseline, kCpuCodeHash),
      recorded_arm("baseline (A′)", ab::ArmRole::kBaselineRepeat, record.experiment.baseline,
                   kCpuCodeHash),
      recorded_arm("1 thread", ab::ArmRole::kVariant, record.experiment.variants[0],
                   kCpuCodeHash)};
  return record;
}

ab::RunRecord command_record() {
  const auto command_arm = [](std::string name, std::string command) {
    return ab::Arm{.name = std::move(name),
                   .prediction_pct = std::nullopt,
                   .config = ab::CommandArm{.command = std::move(command),
                                            .env = {},
                                            .metric_regex = "metric: ([0-9.]+)",
                                            .direction = ab::Direction::kHigherIsBetter,
                                            .timeout_s = 5}};
  };
  ab::RunRecord record;
  record.experiment.name = "serving";
  record.experiment.backend = Backend::kNone;
  record.experiment.baseline = command_arm("baseline", "echo metric: 100");
  record.experiment.variants = {command_arm("more", "echo metric: 110")};
  record.environment = two_thread_host(Backend::kNone);
  record.environment.gpu = "none";
  record.arms = {recorded_arm("baseline", ab::ArmRole::kBaseline, record.experiment.baseline,
                              std::string(64, 'a')),
                 recorded_arm("baseline (A′)", ab::ArmRole::kBaselineRepeat,
                              record.experiment.baseline, std::string(64, 'a')),
                 recorded_arm("more", ab::ArmRole::kVariant, record.experiment.variants[0],
                              std::string(64, 'b'))};
  return record;
}

Fingerprint written_and_read(const Fingerprint& fingerprint) {
  std::ostringstream out;
  write_fingerprint(fingerprint, out);
  return fingerprint_from_json(nlohmann::json::parse(out.str()));
}

TEST(Fingerprint, CpuRunWritesNullWhereBenchJsonDoes) {
  const auto json = fingerprint_json(fingerprint_of(cpu_record()));
  EXPECT_EQ(json["schema"], std::string(kFingerprintSchema));
  EXPECT_EQ(json["backend"], "cpu");
  for (const char* key : {"gpu", "sm_count", "sm_clock_mhz", "max_sm_clock_mhz", "mem_clock_mhz",
                          "driver", "cuda_runtime"}) {
    EXPECT_TRUE(json[key].is_null()) << key << ": " << json[key];
  }
  EXPECT_EQ(json["cpu_model"], "AMD EPYC 7B13");
  EXPECT_EQ(json["hardware_threads"], 2);
  EXPECT_EQ(json["usable_cpus"], 2);
  const auto& baseline = json["arms"][0];
  EXPECT_TRUE(baseline["config"]["split"].is_null()) << "the CPU backend has no split";
  EXPECT_EQ(baseline["config"]["cpu_threads"], "2");
  EXPECT_EQ(baseline["code_hash"], kCpuCodeHash);
}

TEST(Fingerprint, CudaRunHasNoCpuThreadsAndUnknownsAreNull) {
  Fingerprint fingerprint = recorded();
  fingerprint.mem_clock_mhz = -1;  // nvidia-smi could not tell
  fingerprint.driver.clear();
  const auto json = fingerprint_json(fingerprint);
  EXPECT_TRUE(json["mem_clock_mhz"].is_null());
  EXPECT_TRUE(json["driver"].is_null());
  EXPECT_EQ(json["arms"][0]["config"]["split"], "heuristic");
  EXPECT_TRUE(json["arms"][0]["config"]["cpu_threads"].is_null());
}

TEST(CompareFingerprints, CpuRunComparesTheCpuAndTheCodeHashesAndSaysSo) {
  const Fingerprint fingerprint = fingerprint_of(cpu_record());
  const Comparison same = compare_fingerprints(fingerprint, written_and_read(fingerprint));
  EXPECT_TRUE(same.differences.empty()) << ::testing::PrintToString(lines(same.differences));
  // Exactly what a CPU run depends on; nothing about a GPU.
  EXPECT_EQ(same.compared, (std::vector<std::string>{"backend", "CPU model", "hardware threads",
                                                     "usable CPUs", "the sweep",
                                                     "the code hashes of 2 arms",
                                                     "the configs of 2 arms"}));
  EXPECT_EQ(same.noted, (std::vector<std::string>{"commit", "host"}));
  EXPECT_TRUE(same.not_compared.empty());
}

TEST(CompareFingerprints, CpuRunFlagsAnotherCpuTasksetAndCode) {
  const Fingerprint fingerprint = fingerprint_of(cpu_record());
  Fingerprint current = fingerprint;
  current.cpu_model = "Intel(R) Xeon(R) Platinum 8480+";
  current.usable_cpus = 1;  // taskset -c 0
  for (FingerprintArm& arm : current.arms) arm.code_hash = std::string(64, 'e');
  current.commit = "fedcba987654";
  current.host = "other-vm";
  EXPECT_EQ(lines(compare_fingerprints(fingerprint, current).differences),
            (std::vector<std::string>{
                "CPU model: recorded AMD EPYC 7B13, current Intel(R) Xeon(R) Platinum 8480+",
                "usable CPUs: recorded 2, current 1",
                "arm baseline: code hash: recorded " + kCpuCodeHash + ", current " +
                    std::string(64, 'e'),
                "arm 1 thread: code hash: recorded " + kCpuCodeHash + ", current " +
                    std::string(64, 'e'),
                "note: commit: recorded 0123456789ab, current fedcba987654",
                "note: host: recorded vm, current other-vm"}));
}

TEST(CompareFingerprints, CpuRunAtAnotherCommitWithTheSameCodeIsVerified) {
  const Fingerprint fingerprint = fingerprint_of(cpu_record());
  Fingerprint current = fingerprint;
  current.commit = "fedcba987654";
  const auto differences = compare_fingerprints(fingerprint, current).differences;
  ASSERT_EQ(differences.size(), 1u);
  EXPECT_FALSE(differences[0].blocking);
  EXPECT_EQ(differences[0].what, "commit");
}

TEST(CompareFingerprints, CudaRunSaysWhatItCompared) {
  const Comparison comparison = compare_fingerprints(recorded(), recorded());
  EXPECT_EQ(comparison.compared,
            (std::vector<std::string>{"backend", "GPU", "SM count", "peak SM clock",
                                      "memory clock", "the sweep", "the code hashes of 7 arms",
                                      "the configs of 7 arms"}));
  EXPECT_EQ(comparison.noted,
            (std::vector<std::string>{"commit", "driver", "CUDA runtime", "host"}));
}

TEST(CompareFingerprints, CommandRunRecordsWhatRanAndVerifiesOnTheSameMachine) {
  const ab::RunRecord record = command_record();
  const auto json = fingerprint_json(fingerprint_of(record));
  EXPECT_EQ(json["backend"], "none");
  EXPECT_EQ(json["gpu"], "none") << "no GPU was visible: a fact, not an unknown";
  EXPECT_TRUE(json["sm_count"].is_null());
  EXPECT_EQ(json["cpu_model"], "AMD EPYC 7B13");

  // What verify gathers on the same machine: the machine read the same way, and the arms'
  // configs and command hashes from the experiment file.
  Fingerprint current = machine_fingerprint(record.environment);
  for (const FingerprintArm& arm : fingerprint_of(record).arms) {
    if (arm.role != ab::ArmRole::kBaselineRepeat) current.arms.push_back(arm);
  }
  const Comparison comparison =
      compare_fingerprints(written_and_read(fingerprint_of(record)), current);
  EXPECT_TRUE(comparison.differences.empty())
      << ::testing::PrintToString(lines(comparison.differences));
  EXPECT_EQ(comparison.compared,
            (std::vector<std::string>{"backend", "CPU model", "hardware threads", "usable CPUs",
                                      "GPUs visible", "the code hashes of 2 arms",
                                      "the configs of 2 arms"}));
  current.gpu = "NVIDIA H200";
  EXPECT_EQ(lines(compare_fingerprints(fingerprint_of(record), current).differences),
            (std::vector<std::string>{"GPUs visible: recorded none, current NVIDIA H200"}));
}

TEST(CompareFingerprints, UnknownFieldsAreListedAsNotCompared) {
  Fingerprint old_cpu = fingerprint_of(cpu_record());
  old_cpu.cpu_model.clear();
  old_cpu.usable_cpus = 0;
  const Comparison comparison = compare_fingerprints(old_cpu, fingerprint_of(cpu_record()));
  EXPECT_TRUE(comparison.differences.empty());
  EXPECT_EQ(comparison.not_compared, (std::vector<std::string>{"CPU model (not recorded)",
                                                               "usable CPUs (not recorded)"}));
}

// ---- Schema 1 ---------------------------------------------------------------------------------

TEST(Fingerprint, ReadsTheCommittedH200FingerprintsAndTheyStillVerify) {
  const std::filesystem::path path = std::filesystem::path(MLALAB_SOURCE_DIR) /
                                     "docs/results/2026-11-29-h200-final/ab/occupancy/"
                                     "fingerprint.json";
  const Fingerprint fingerprint = read_fingerprint(path);
  EXPECT_EQ(fingerprint.backend, Backend::kCuda);
  EXPECT_EQ(fingerprint.gpu, "NVIDIA H200");
  EXPECT_EQ(fingerprint.sm_count, 132);
  EXPECT_EQ(fingerprint.max_sm_clock_mhz, 1980);
  EXPECT_EQ(fingerprint.mem_clock_mhz, 3201);
  EXPECT_TRUE(fingerprint.cpu_model.empty()) << "schema 1 did not record the CPU";
  ASSERT_EQ(fingerprint.arms.size(), 4u);
  EXPECT_EQ(fingerprint.arms[2].name, "8 warps");
  EXPECT_EQ(fingerprint.arms[2].config.at("split"), "target_ctas:512");
  EXPECT_EQ(fingerprint.arms[2].config.at("cpu_threads"), std::nullopt)
      << "schema 1's placeholder 0 on the cuda backend";

  // What this build gathers on that H200 with the same kernels: the machine and the hashes as
  // recorded, and the configs of experiments/occupancy.toml's arms as config_fields gives them.
  const auto kernel = [](std::string name, std::string variant) {
    return ab::Arm{.name = std::move(name),
                   .prediction_pct = std::nullopt,
                   .config = ab::KernelArm{.variant = std::move(variant),
                                           .split = *parse_split_policy("target_ctas:512"),
                                           .cpu_threads = 0}};
  };
  Fingerprint current = fingerprint;
  current.arms.clear();
  for (const FingerprintArm& arm : fingerprint.arms) {
    if (arm.role == ab::ArmRole::kBaselineRepeat) continue;
    FingerprintArm now = arm;
    now.config = config_fields(kernel(arm.name, *arm.config.at("variant")), Backend::kCuda);
    current.arms.push_back(now);
  }
  EXPECT_TRUE(fingerprint.sweep.empty()) << "written before fingerprints recorded the sweep";
  const Comparison comparison = compare_fingerprints(fingerprint, current);
  EXPECT_TRUE(comparison.differences.empty())
      << ::testing::PrintToString(lines(comparison.differences));
  EXPECT_EQ(comparison.compared,
            (std::vector<std::string>{"backend", "GPU", "SM count", "peak SM clock",
                                      "memory clock", "the code hashes of 3 arms",
                                      "the configs of 3 arms"}));
  // Written again in schema 2, it reads back the same.
  EXPECT_EQ(fingerprint_json(written_and_read(fingerprint)), fingerprint_json(fingerprint));
}

TEST(Fingerprint, ReadsEveryCommittedFingerprint) {
  int read = 0;
  for (const auto& entry :
       std::filesystem::recursive_directory_iterator(std::filesystem::path(MLALAB_SOURCE_DIR) /
                                                     "docs/results")) {
    if (entry.path().filename() != "fingerprint.json") continue;
    const Fingerprint fingerprint = read_fingerprint(entry.path());
    EXPECT_TRUE(compare_fingerprints(fingerprint, fingerprint).differences.empty())
        << entry.path();
    ++read;
  }
  EXPECT_GE(read, 4);
}

TEST(Fingerprint, Schema1PlaceholdersReadAsUnknownAndCommandRunsAsBackendNone) {
  // As schema 1 wrote a CPU run and a command run (backend cuda, without a GPU).
  nlohmann::json cpu = {
      {"schema", "mlalab.ab.fingerprint/1"}, {"experiment", "cpu-demo"},
      {"started_utc", "2026-11-30T10:00:00Z"}, {"backend", "cpu"},
      {"gpu", "cpu (2 threads)"}, {"sm_count", 0}, {"sm_clock_mhz", -1},
      {"max_sm_clock_mhz", -1}, {"mem_clock_mhz", -1}, {"driver", ""}, {"cuda_runtime", ""},
      {"commit", "0123456789ab"}, {"host", "vm"},
      {"arms",
       {{{"name", "baseline"}, {"role", "baseline"}, {"config_text", "cpu threads=2"},
         {"config",
          {{"cpu_threads", "2"}, {"kind", "kernel"}, {"split", "heuristic"}, {"variant", "cpu"}}},
         {"code_hash", ""}, {"valid", true}}}}};
  const Fingerprint cpu_run = fingerprint_from_json(cpu);
  EXPECT_EQ(cpu_run.backend, Backend::kCpu);
  EXPECT_EQ(cpu_run.gpu, "") << "'cpu (2 threads)' named no GPU";
  EXPECT_EQ(cpu_run.sm_count, 0);
  EXPECT_EQ(cpu_run.arms[0].config.at("split"), std::nullopt);
  EXPECT_EQ(cpu_run.arms[0].config.at("cpu_threads"), "2");
  EXPECT_EQ(cpu_run.arms[0].code_hash, "");

  nlohmann::json command = cpu;
  command["backend"] = "cuda";
  command["arms"][0]["config"] = {{"kind", "command"}, {"command", "echo metric: 1"},
                                  {"metric_regex", "metric: (.*)"}, {"direction", "higher"},
                                  {"timeout_s", "5"}};
  const Fingerprint command_run = fingerprint_from_json(command);
  EXPECT_EQ(command_run.backend, Backend::kNone);
  EXPECT_EQ(command_run.gpu, "") << "unknown: schema 1 did not record the visible GPUs";
  // Schema 1's "metric_regex" is the key the experiment file calls `metric`.
  EXPECT_EQ(command_run.arms[0].config.count("metric_regex"), 0u);
  EXPECT_EQ(command_run.arms[0].config.at("metric"), "metric: (.*)");
}

}  // namespace
}  // namespace mlalab::report
