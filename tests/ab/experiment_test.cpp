#include "ab/experiment.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>
#include <vector>

#include "core/layout.h"
#include "dispatch/tuning_table.h"
#include "kernels/registry.h"

namespace mlalab::ab {
namespace {

constexpr const char* kPath = "test.toml";

// The variants the shipped experiments name, injected so that these tests do not depend on
// which variants a build compiled (CI builds only h16_t16_w4_s2 and h64_t32_w8_s2).
ParseOptions study_build() {
  return ParseOptions{
      .compiled_variants = std::vector<std::string>{"h16_t16_w4_s2", "h16_t16_w8_s2",
                                                    "h16_t16_w4_s3", "h64_t32_w8_s2"},
      .feasibility = [](const VariantShape&, Layout) -> std::optional<std::string> {
        return std::nullopt;
      }};
}

// A valid experiment, to which each test appends or in which it replaces one line. Line
// numbers matter: tests assert them.
const std::string kHeader = R"(name = "t"
hypothesis = "h"

[sweep]
concurrency = [1, 8]

)";
// Lines 1-6 are kHeader; kBaseline is lines 7-9; kVariant lines 10-13.
const std::string kBaseline = R"([baseline]
variant = "h16_t16_w4_s2"
split = "target_ctas:512"
)";
const std::string kVariant = R"([[variant]]
name = "8 warps"
warps = 8
prediction = 20.0
)";

Experiment parse(const std::string& text, const ParseOptions& options = study_build()) {
  return parse_experiment(text, kPath, options);
}

// Parses text that must be refused; checks that the message names the line and the field.
ExperimentError refused(const std::string& text, int line, const std::string& field,
                        const ParseOptions& options = study_build()) {
  try {
    parse(text, options);
  } catch (const ExperimentError& error) {
    EXPECT_EQ(error.line(), line) << error.what();
    EXPECT_EQ(error.field(), field) << error.what();
    EXPECT_EQ(error.path(), kPath);
    const std::string what = error.what();
    if (line > 0) {
      EXPECT_NE(what.find(std::string(kPath) + ":" + std::to_string(line) + ":"),
                std::string::npos)
          << what;
    }
    if (!field.empty()) {
      EXPECT_NE(what.find(field), std::string::npos) << what;
    }
    return error;
  }
  ADD_FAILURE() << "accepted:\n" << text;
  return ExperimentError(kPath, 0, "", "accepted");
}

bool mentions(const ExperimentError& error, const std::string& text) {
  return std::string(error.what()).find(text) != std::string::npos;
}

#define EXPECT_MENTIONS(error, text) EXPECT_TRUE(mentions(error, text)) << (error).what()

const KernelArm& kernel(const Arm& arm) { return std::get<KernelArm>(arm.config); }
const CommandArm& command(const Arm& arm) { return std::get<CommandArm>(arm.config); }

// ---------------------------------------------------------------------------------------------
// The shipped experiments

std::string shipped(const std::string& name) {
  return std::string(MLALAB_SOURCE_DIR) + "/experiments/" + name;
}

bool compiled_in_this_build(const std::string& name) {
  return kernels::find_variant(name) != nullptr;
}

// The variant a refusal says is missing from the build, if that is what it says.
std::optional<std::string> variant_missing_from_build(const std::string& what) {
  static const std::regex kNotCompiled(
      "((?:wgmma_)?h[0-9]+_t[0-9]+_w[0-9]+_s[0-9]+(?:_whole)?), which is not "
      "compiled into this build|"
      "'((?:wgmma_)?h[0-9]+_t[0-9]+_w[0-9]+_s[0-9]+(?:_whole)?)' is not compiled "
      "into this build");
  std::smatch match;
  if (!std::regex_search(what, match, kNotCompiled)) return std::nullopt;
  return match[1].matched ? match[1].str() : match[2].str();
}

// With this build's variants and this machine's GPU (or none): the file parses, or is refused
// only because it names a variant this build did not compile, and says which.
void expect_parses_or_names_missing_variant(const std::string& file) {
  try {
    const Experiment experiment = load_experiment(shipped(file));
    EXPECT_FALSE(experiment.variants.empty());
  } catch (const ExperimentError& error) {
    const auto missing = variant_missing_from_build(error.what());
    ASSERT_TRUE(missing) << error.what();
    EXPECT_FALSE(compiled_in_this_build(*missing)) << error.what();
    GTEST_SKIP() << file << " needs " << *missing << ", not compiled in this build: "
                 << error.what();
  }
}

// The CI build compiles h16_t16_w4_s2 and h64_t32_w8_s2 only: the occupancy study is then
// refused at its first variant, naming the variant to build.
TEST(ExperimentShippedFiles, InTheCiBuildOccupancyNamesTheVariantToBuild) {
  ParseOptions ci = study_build();
  ci.compiled_variants = std::vector<std::string>{"h16_t16_w4_s2", "h64_t32_w8_s2"};
  try {
    load_experiment(shipped("occupancy.toml"), ci);
    FAIL() << "accepted";
  } catch (const ExperimentError& error) {
    EXPECT_EQ(variant_missing_from_build(error.what()), "h16_t16_w8_s2") << error.what();
    EXPECT_EQ(error.field(), "variant[0].warps");
  }
  EXPECT_NO_THROW(load_experiment(shipped("target-ctas.toml"), ci));
}

TEST(ExperimentShippedFiles, OccupancyParsesInThisBuild) {
  expect_parses_or_names_missing_variant("occupancy.toml");
}

TEST(ExperimentShippedFiles, TargetCtasParsesInThisBuild) {
  expect_parses_or_names_missing_variant("target-ctas.toml");
}

TEST(ExperimentShippedFiles, BatchAwareParsesInThisBuild) {
  expect_parses_or_names_missing_variant("batch-aware.toml");
}

TEST(ExperimentShippedFiles, BatchAwareH128ParsesInThisBuild) {
  expect_parses_or_names_missing_variant("batch-aware-h128.toml");
}

TEST(ExperimentShippedFiles, MixedAndEqualLengthStudiesParseInThisBuild) {
  for (const char* file : {"mixed-lengths.toml", "mixed-lengths-h128.toml", "equal-lengths.toml",
                           "equal-lengths-h128.toml"}) {
    SCOPED_TRACE(file);
    expect_parses_or_names_missing_variant(file);
  }
}

TEST(ExperimentShippedFiles, MixedLengthStudiesRaceTheSplitHeuristicAgainstBalanced) {
  const Experiment mixed = load_experiment(shipped("mixed-lengths.toml"), study_build());
  EXPECT_EQ(mixed.sweep.context.kind, ContextSpec::Kind::kUniform);
  EXPECT_EQ(mixed.sweep.context.min_length, 1024);
  EXPECT_EQ(mixed.sweep.context.max_length, 8192);
  EXPECT_EQ(mixed.sweep.concurrency, (std::vector<int>{8, 64, 128}));
  EXPECT_EQ(arm_config_text(mixed.baseline), "h16_t16_w4_s2 heuristic");
  ASSERT_EQ(mixed.variants.size(), 1u);
  EXPECT_EQ(arm_config_text(mixed.variants[0]), "h16_t16_w4_s2 balanced");
  const Experiment equal = load_experiment(shipped("equal-lengths.toml"), study_build());
  EXPECT_EQ(equal.sweep.context.kind, ContextSpec::Kind::kFixed);
  EXPECT_EQ(equal.sweep.context.length, 4608);
  EXPECT_EQ(equal.sweep.concurrency, mixed.sweep.concurrency);
}

TEST(ExperimentShippedFiles, TritonOccupancyIsTheStudyOnTheTritonKernel) {
  // Only mlalab's arm needs a compiled variant; the study build has it, whatever this one has.
  const Experiment experiment = load_experiment(shipped("triton-occupancy.toml"), study_build());
  const auto& baseline = std::get<KernelArm>(experiment.baseline.config);
  EXPECT_EQ(baseline.python, "mlalab.triton_decode:arm");
  EXPECT_EQ(baseline.params, R"({"block_h":16,"block_n":16,"num_stages":2,"num_warps":4,)"
                             R"("target_ctas":512})");
  ASSERT_EQ(experiment.variants.size(), 4u);
  EXPECT_EQ(std::get<KernelArm>(experiment.variants[0].config).params,
            R"({"block_h":16,"block_n":16,"num_stages":2,"num_warps":8,"target_ctas":512})");
  EXPECT_EQ(std::get<KernelArm>(experiment.variants[1].config).params,
            R"({"block_h":16,"block_n":16,"num_stages":3,"num_warps":4,"target_ctas":512})");
  EXPECT_EQ(std::get<KernelArm>(experiment.variants[2].config).params,
            R"({"block_h":16,"block_n":32,"num_stages":2,"num_warps":4,"smem_limit":101376,)"
            R"("target_ctas":512})");
  EXPECT_EQ(std::get<KernelArm>(experiment.variants[3].config).variant, "h16_t16_w4_s2");
  EXPECT_EQ(experiment.sweep.layout, Layout::kV4);
}

TEST(ExperimentShippedFiles, PythonPathRacesTheSameKernelThroughBothPaths) {
  const Experiment experiment = load_experiment(shipped("python-path.toml"), study_build());
  EXPECT_EQ(arm_config_text(experiment.baseline), "h16_t16_w4_s2 heuristic");
  ASSERT_EQ(experiment.variants.size(), 1u);
  const auto& python = std::get<KernelArm>(experiment.variants[0].config);
  EXPECT_EQ(python.python, "mlalab.arms:mla_decode");
  EXPECT_EQ(python.params, "{}");
  EXPECT_EQ(experiment.variants[0].prediction_pct, 0.0);
}

TEST(ExperimentShippedFiles, CpuDemoParsesInEveryBuild) {
  const Experiment experiment = load_experiment(shipped("cpu-demo.toml"));
  EXPECT_EQ(experiment.backend, Backend::kCpu);
  EXPECT_EQ(kernel(experiment.baseline).variant, "cpu");
  EXPECT_EQ(kernel(experiment.baseline).cpu_threads, 2);
  ASSERT_EQ(experiment.variants.size(), 1u);
  EXPECT_EQ(kernel(experiment.variants[0]).cpu_threads, 1);
  EXPECT_EQ(experiment.variants[0].prediction_pct, -45.0);
  EXPECT_EQ(experiment.sweep.concurrency, (std::vector<int>{1, 2, 4, 8}));
  EXPECT_EQ(experiment.sweep.context.length, 2048);
  // About a minute on 2 cores: the per-point budgets fit in the run's cap.
  EXPECT_LE(experiment.stats.time_budget_s * 4, experiment.measure.max_minutes * 60);
  EXPECT_LE(experiment.measure.max_minutes, 1.5);
}

TEST(ExperimentShippedFiles, OccupancyIsTheStudy) {
  const Experiment experiment = load_experiment(shipped("occupancy.toml"), study_build());
  EXPECT_EQ(experiment.name, "occupancy");
  EXPECT_EQ(experiment.hypothesis, "8 warps per SM hide the gather latency: +15-25%");
  EXPECT_EQ(experiment.backend, Backend::kCuda);
  EXPECT_EQ(experiment.sweep.layout, Layout::kV4);
  EXPECT_EQ(experiment.sweep.heads, 16);
  EXPECT_EQ(experiment.sweep.page_size, 64);
  EXPECT_EQ(experiment.sweep.concurrency,
            (std::vector<int>{1, 8, 16, 32, 48, 64, 80, 96, 128}));
  EXPECT_EQ(experiment.sweep.context.kind, ContextSpec::Kind::kFixed);
  EXPECT_EQ(experiment.sweep.context.length, 4096);
  EXPECT_EQ(arm_config_text(experiment.baseline), "h16_t16_w4_s2 target_ctas:512");
  ASSERT_EQ(experiment.variants.size(), 2u);
  EXPECT_EQ(experiment.variants[0].name, "8 warps");
  EXPECT_EQ(arm_config_text(experiment.variants[0]), "h16_t16_w8_s2 target_ctas:512");
  EXPECT_EQ(experiment.variants[0].prediction_pct, 20.0);
  EXPECT_EQ(experiment.variants[1].name, "3 stages");
  EXPECT_EQ(arm_config_text(experiment.variants[1]), "h16_t16_w4_s3 target_ctas:512");
  EXPECT_EQ(experiment.measure.max_minutes, 5.0);
  EXPECT_FALSE(experiment.source_text.empty());
  EXPECT_EQ(experiment.source_path, shipped("occupancy.toml"));
}

TEST(ExperimentShippedFiles, TargetCtasVariesOnlyTheSplit) {
  const Experiment experiment = load_experiment(shipped("target-ctas.toml"), study_build());
  EXPECT_EQ(arm_config_text(experiment.baseline), "h16_t16_w4_s2 heuristic");
  std::vector<std::string> configs;
  for (const auto& variant : experiment.variants) {
    EXPECT_EQ(kernel(variant).variant, "h16_t16_w4_s2");
    configs.push_back(arm_config_text(variant));
  }
  EXPECT_EQ(configs, (std::vector<std::string>{
                         "h16_t16_w4_s2 target_ctas:128", "h16_t16_w4_s2 target_ctas:256",
                         "h16_t16_w4_s2 target_ctas:512", "h16_t16_w4_s2 target_ctas:1024"}));
}

// The H200 studies must finish within 5 minutes even if no point stops early on precision.
TEST(ExperimentShippedFiles, GpuStudiesFitInFiveMinutes) {
  for (const char* file : {"occupancy.toml", "target-ctas.toml"}) {
    const Experiment experiment = load_experiment(shipped(file), study_build());
    const double points = static_cast<double>(experiment.sweep.concurrency.size());
    EXPECT_LE(experiment.measure.max_minutes, 5.0) << file;
    EXPECT_LE(points * experiment.stats.time_budget_s, 0.75 * 5 * 60) << file;
    EXPECT_GE(experiment.stats.max_rounds, experiment.stats.min_rounds) << file;
  }
}

// ---------------------------------------------------------------------------------------------
// Defaults and the happy paths

TEST(ExperimentParse, AppliesTheDefaults) {
  const Experiment experiment = parse(kHeader + kBaseline + kVariant);
  EXPECT_EQ(experiment.backend, Backend::kCuda);
  EXPECT_EQ(experiment.sweep.layout, Layout::kV4);
  EXPECT_EQ(experiment.sweep.heads, 16);
  EXPECT_EQ(experiment.sweep.page_size, 64);
  EXPECT_EQ(experiment.sweep.context.kind, ContextSpec::Kind::kFixed);
  EXPECT_EQ(experiment.sweep.context.length, 4096);
  EXPECT_EQ(experiment.measure.launches_per_sample, MeasureSettings{}.launches_per_sample);
  EXPECT_EQ(experiment.measure.max_minutes, MeasureSettings{}.max_minutes);
  EXPECT_EQ(experiment.stats.alpha, kDefaultAlpha);
  EXPECT_EQ(experiment.stats.max_rounds, kDefaultMaxRounds);
  EXPECT_EQ(experiment.stats.seed, kDefaultSeed);
  EXPECT_EQ(experiment.stats.correction, Correction::kHolm);
  EXPECT_EQ(experiment.baseline.name, "baseline");
  EXPECT_FALSE(experiment.baseline.prediction_pct);
  EXPECT_EQ(experiment.source_path, kPath);
}

TEST(ExperimentParse, ReadsEveryDecisionAndMeasureSetting) {
  const Experiment experiment = parse(kHeader + R"([measure]
launches_per_sample = 7
max_minutes = 2.5
throttle_fraction = 0.8
instances_per_arm = 3

[decision]
min_effect_pct = 3
alpha = 0.01
min_rounds = 12
max_rounds = 40
time_budget_s = 30
seed = 99
correction = "bh"
family = "whole_sweep"

)" + kBaseline + kVariant);
  EXPECT_EQ(experiment.measure.launches_per_sample, 7);
  EXPECT_EQ(experiment.measure.max_minutes, 2.5);
  EXPECT_EQ(experiment.measure.throttle_fraction, 0.8);
  EXPECT_EQ(experiment.measure.instances_per_arm, 3);
  EXPECT_EQ(experiment.stats.min_effect_pct, 3.0);
  EXPECT_EQ(experiment.stats.alpha, 0.01);
  EXPECT_EQ(experiment.stats.min_rounds, 12);
  EXPECT_EQ(experiment.stats.max_rounds, 40);
  EXPECT_EQ(experiment.stats.time_budget_s, 30.0);
  EXPECT_EQ(experiment.stats.seed, 99u);
  EXPECT_EQ(experiment.stats.correction, Correction::kBenjaminiHochberg);
  EXPECT_EQ(experiment.stats.family, CorrectionFamily::kWholeSweep);
}

TEST(ExperimentParse, ReadsContextDistributions) {
  const auto with_context = [](const std::string& context) {
    return parse(R"(name = "t"
hypothesis = "h"
[sweep]
concurrency = [4]
context = )" + context + "\n" + kBaseline + kVariant);
  };
  const auto uniform =
      with_context(R"({ distribution = "uniform", min = 512, max = 8192, seed = 7 })");
  EXPECT_EQ(uniform.sweep.context.kind, ContextSpec::Kind::kUniform);
  EXPECT_EQ(uniform.sweep.context.min_length, 512);
  EXPECT_EQ(uniform.sweep.context.max_length, 8192);
  EXPECT_EQ(uniform.sweep.context.seed, 7u);

  const auto lognormal = with_context(
      R"({ distribution = "lognormal", median = 2048, sigma = 0.8, min = 64, max = 32768 })");
  EXPECT_EQ(lognormal.sweep.context.kind, ContextSpec::Kind::kLogNormal);
  EXPECT_EQ(lognormal.sweep.context.length, 2048);
  EXPECT_EQ(lognormal.sweep.context.sigma, 0.8);
  EXPECT_EQ(lognormal.sweep.context.min_length, 64);
  EXPECT_EQ(lognormal.sweep.context.max_length, 32768);
  EXPECT_EQ(lognormal.sweep.context.seed, 1u);

  const auto unbounded =
      with_context(R"({ distribution = "lognormal", median = 2048, sigma = 1 })");
  EXPECT_EQ(unbounded.sweep.context.min_length, 1);
  EXPECT_EQ(unbounded.sweep.context.max_length, kMaxContextLength);
}

// ---------------------------------------------------------------------------------------------
// Knob inheritance

TEST(ExperimentKnobInheritance, AVariantTakesTheBaselinesOtherKnobsAndSplit) {
  const Experiment experiment = parse(kHeader + kBaseline + kVariant + R"(
[[variant]]
name = "3 stages"
stages = 3
)");
  EXPECT_EQ(kernel(experiment.variants[0]).variant, "h16_t16_w8_s2");
  EXPECT_EQ(kernel(experiment.variants[0]).split.to_string(), "target_ctas:512");
  EXPECT_EQ(kernel(experiment.variants[1]).variant, "h16_t16_w4_s3");
  EXPECT_EQ(kernel(experiment.variants[1]).split.to_string(), "target_ctas:512");
}

TEST(ExperimentKnobInheritance, ANamedVariantTakesTheBaselinesSplitUnlessItSetsOne) {
  const Experiment experiment = parse(kHeader + kBaseline + R"([[variant]]
name = "named"
variant = "h16_t16_w8_s2"

[[variant]]
name = "own split"
variant = "h16_t16_w8_s2"
split = "fixed:4"
)");
  EXPECT_EQ(arm_config_text(experiment.variants[0]), "h16_t16_w8_s2 target_ctas:512");
  EXPECT_EQ(arm_config_text(experiment.variants[1]), "h16_t16_w8_s2 fixed:4");
}

TEST(ExperimentKnobInheritance, ABaselineMayBeGivenByAllFourKnobs) {
  const Experiment experiment = parse(kHeader + R"([baseline]
block_h = 16
block_t = 16
warps = 4
stages = 2
)" + kVariant);
  EXPECT_EQ(arm_config_text(experiment.baseline), "h16_t16_w4_s2 heuristic");
  EXPECT_EQ(arm_config_text(experiment.variants[0]), "h16_t16_w8_s2 heuristic");
}

TEST(ExperimentKnobInheritance, ABaselineGivenByKnobsNeedsAllFour) {
  const auto error = refused(kHeader + R"([baseline]
warps = 4
stages = 2
)" + kVariant,
                             8, "baseline.warps");
  EXPECT_MENTIONS(error, "not block_h, block_t");
  EXPECT_MENTIONS(error, "needs all four");
}

TEST(ExperimentKnobInheritance, AKnobGivingAVariantNotCompiledIsRefusedNamingIt) {
  const auto error = refused(kHeader + kBaseline + R"([[variant]]
name = "wide"
warps = 8
block_t = 32
)",
                             12, "variant[0].warps");
  EXPECT_MENTIONS(error, "block_t = 32, warps = 8 applied to the baseline h16_t16_w4_s2 gives "
                         "h16_t32_w8_s2, which is not compiled into this build");
  EXPECT_MENTIONS(error, "compiled: h16_t16_w4_s2, h16_t16_w8_s2, h16_t16_w4_s3, h64_t32_w8_s2");
}

TEST(ExperimentKnobInheritance, KnobsAndAVariantNameTogetherAreRefused) {
  const auto error = refused(kHeader + kBaseline + R"([[variant]]
name = "both"
variant = "h16_t16_w8_s2"
warps = 8
)",
                             13, "variant[0].warps");
  EXPECT_MENTIONS(error, "either variant");
}

// ---------------------------------------------------------------------------------------------
// Unknown keys, anywhere

TEST(ExperimentUnknownKeys, AMisspeltKnobIsRefusedWithTheKnownKeysAndAHint) {
  const auto error = refused(kHeader + kBaseline + R"([[variant]]
name = "8 warps"
wraps = 8
)",
                             12, "variant[0].wraps");
  EXPECT_MENTIONS(error, "unknown key 'wraps' in the 1st [[variant]]");
  EXPECT_MENTIONS(error, "did you mean 'warps'?");
  EXPECT_MENTIONS(error, "known keys: name, prediction, variant, block_h");
}

TEST(ExperimentUnknownKeys, InTheSecondVariant) {
  const auto error = refused(kHeader + kBaseline + kVariant + R"(
[[variant]]
name = "other"
stages = 3
colour = "red"
)",
                             18, "variant[1].colour");
  EXPECT_MENTIONS(error, "in the 2nd [[variant]]");
}

// TOML puts every key after a [header] into that table: a setting written at the end of the
// file lands in the last [[variant]]. The message says where it belongs.
TEST(ExperimentUnknownKeys, AKeyOfAnotherTableSaysWhereItBelongs) {
  const auto decision = refused(kHeader + kBaseline + kVariant + "correction = \"bh\"\n", 14,
                                "variant[0].correction");
  EXPECT_MENTIONS(decision, "'correction' belongs in [decision]");
  const auto top = refused(kHeader + kBaseline + "backend = \"cpu\"\n" + kVariant, 10,
                           "baseline.backend");
  EXPECT_MENTIONS(top, "belongs in the top level: write it before the first [table] header");
  const auto arm = refused("warps = 8\n" + kHeader + kBaseline + kVariant, 1, "warps");
  EXPECT_MENTIONS(arm, "belongs in [baseline] or a [[variant]]");
}

TEST(ExperimentUnknownKeys, AtEveryLevel) {
  refused("nmae = \"t\"\n" + kHeader + kBaseline + kVariant, 1, "nmae");
  refused(R"(name = "t"
hypothesis = "h"
[sweep]
concurrency = [1]
head = 16
)" + kBaseline + kVariant,
          5, "sweep.head");
  refused(kHeader + "[measure]\nlaunches = 3\n" + kBaseline + kVariant, 8, "measure.launches");
  refused(kHeader + "[decision]\nconfidence = 0.95\n" + kBaseline + kVariant, 8,
          "decision.confidence");
  refused(kHeader + "[baseline]\nvariant = \"h16_t16_w4_s2\"\nsplits = \"fixed:2\"\n" + kVariant,
          9, "baseline.splits");
  refused(R"(name = "t"
hypothesis = "h"
[sweep]
concurrency = [1]
context = { distribution = "uniform", min = 1, max = 9, median = 4 }
)" + kBaseline + kVariant,
          5, "sweep.context.median");
}

// ---------------------------------------------------------------------------------------------
// Missing and mistyped fields

TEST(ExperimentMissingFields, AreRefusedNamingTheKey) {
  refused("hypothesis = \"h\"\n[sweep]\nconcurrency = [1]\n" + kBaseline + kVariant, 0, "name");
  refused("name = \"t\"\n[sweep]\nconcurrency = [1]\n" + kBaseline + kVariant, 0, "hypothesis");
  refused("name = \"t\"\nhypothesis = \"h\"\n" + kBaseline + kVariant, 0, "sweep");
  refused("name = \"t\"\nhypothesis = \"h\"\n[sweep]\nheads = 16\n" + kBaseline + kVariant, 3,
          "sweep.concurrency");
  refused(kHeader + kVariant, 0, "baseline");
  refused(kHeader + kBaseline, 0, "variant");
  const auto unnamed = refused(kHeader + kBaseline + "[[variant]]\nwarps = 8\n", 10,
                               "variant[0].name");
  EXPECT_MENTIONS(unnamed, "missing key 'name' in the 1st [[variant]]");
}

TEST(ExperimentMistypedFields, AreRefusedWithTheTypeExpected) {
  const auto split = refused(kHeader + kBaseline + kVariant + R"(
[[variant]]
name = "split"
split = 512
)",
                             17, "variant[1].split");
  EXPECT_MENTIONS(split, "expected a string (e.g. split = \"target_ctas:512\"), got an integer");

  refused(R"(name = "t"
hypothesis = "h"
[sweep]
heads = "16"
concurrency = [1]
)" + kBaseline + kVariant,
          4, "sweep.heads");
  const auto element = refused(R"(name = "t"
hypothesis = "h"
[sweep]
concurrency = [1, 8,
  "16"]
)" + kBaseline + kVariant,
                               5, "sweep.concurrency[2]");
  EXPECT_MENTIONS(element, "expected an integer, got a string");
  refused(kHeader + "[measure]\nmax_minutes = \"5\"\n" + kBaseline + kVariant, 8,
          "measure.max_minutes");
  refused(kHeader + "[decision]\nmin_rounds = 20.5\n" + kBaseline + kVariant, 8,
          "decision.min_rounds");
  refused("name = 3\n" + kHeader.substr(kHeader.find('\n') + 1) + kBaseline + kVariant, 1,
          "name");
  refused(kHeader + kBaseline + kVariant + "prediction2 = 1\n", 14, "variant[0].prediction2");
}

TEST(ExperimentMistypedTables, SayHowToWriteThem) {
  const auto single = refused(kHeader + kBaseline + "[variant]\nname = \"x\"\nwarps = 8\n", 10,
                              "variant");
  EXPECT_MENTIONS(single, "[[variant]]");
  const auto many = refused(kHeader + "[[baseline]]\nvariant = \"h16_t16_w4_s2\"\n" + kVariant, 7,
                            "baseline");
  EXPECT_MENTIONS(many, "one baseline");
}

// ---------------------------------------------------------------------------------------------
// TOML syntax

TEST(ExperimentTomlSyntax, ErrorsCarryLineAndColumn) {
  try {
    parse("name = \"t\"\nhypothesis = \"h\"\n[sweep]\nconcurrency = [1, 8\n");
    FAIL() << "accepted";
  } catch (const ExperimentError& error) {
    EXPECT_GE(error.line(), 4);
    EXPECT_GT(error.column(), 0);
    const std::string expected_prefix =
        std::string(kPath) + ":" + std::to_string(error.line()) + ":" +
        std::to_string(error.column()) + ": TOML syntax: ";
    EXPECT_EQ(std::string(error.what()).rfind(expected_prefix, 0), 0u) << error.what();
  }
}

TEST(ExperimentTomlSyntax, ADuplicateKeyIsASyntaxError) {
  try {
    parse(kHeader + kBaseline + kVariant + "warps = 4\n");
    FAIL() << "accepted";
  } catch (const ExperimentError& error) {
    EXPECT_EQ(error.line(), 14) << error.what();
    EXPECT_MENTIONS(error, "TOML syntax");
  }
}

// ---------------------------------------------------------------------------------------------
// Ranges

std::string with_sweep(const std::string& sweep_lines) {
  return "name = \"t\"\nhypothesis = \"h\"\n[sweep]\n" + sweep_lines + "\n" + kBaseline +
         kVariant;
}

TEST(ExperimentRanges, SweepValuesOutOfRangeAreRefused) {
  refused(with_sweep("heads = 0\nconcurrency = [1]"), 4, "sweep.heads");
  const auto heads = refused(with_sweep("heads = 129\nconcurrency = [1]"), 4, "sweep.heads");
  EXPECT_MENTIONS(heads, "129 is out of range: allowed [1, 128]");
  const auto page = refused(with_sweep("page_size = 48\nconcurrency = [1]"), 4,
                            "sweep.page_size");
  EXPECT_MENTIONS(page, "not a power of two");
  refused(with_sweep("page_size = 256\nconcurrency = [1]"), 4, "sweep.page_size");
  refused(with_sweep("layout = \"v5\"\nconcurrency = [1]"), 4, "sweep.layout");
  refused(with_sweep("concurrency = []"), 4, "sweep.concurrency");
  refused(with_sweep("concurrency = [0, 1]"), 4, "sweep.concurrency[0]");
  refused(with_sweep("concurrency = [1, 65537]"), 4, "sweep.concurrency[1]");
  const auto order = refused(with_sweep("concurrency = [1, 16, 8]"), 4, "sweep.concurrency[2]");
  EXPECT_MENTIONS(order, "8 after 16: list the batch sizes in ascending order");
  refused(with_sweep("concurrency = [1, 8, 8]"), 4, "sweep.concurrency[2]");
  refused(with_sweep("concurrency = [1]\ncontext = 0"), 5, "sweep.context");
  refused(with_sweep("concurrency = [1]\ncontext = 1048577"), 5, "sweep.context");
  refused(with_sweep("concurrency = [1]\ncontext = 4096.0"), 5, "sweep.context");
}

// As bench does: a sweep whose largest point's KV cache could not be allocated is refused up
// front, not after the smaller points ran (V4 rows are 512 × 2 B = 1 KiB: 16 GiB is 2^24
// tokens, so 64 × 2^20 is 64 GiB and 16 × 2^20 exactly fits).
TEST(ExperimentRanges, AKvCacheThatCannotBeAllocatedIsRefused) {
  const auto error = refused(
      with_sweep("layout = \"v4\"\nconcurrency = [1, 64]\ncontext = 1048576"), 5,
      "sweep.concurrency");
  EXPECT_MENTIONS(error, "concurrency 64 × context 1048576 (64 GiB of KV cache): allowed at most "
                         "16 GiB of KV cache per problem");
  EXPECT_NO_THROW(parse(with_sweep("layout = \"v4\"\nconcurrency = [1, 16]\ncontext = 1048576")));
  const auto drawn = refused(
      with_sweep("layout = \"v4\"\nconcurrency = [64]\ncontext = { distribution = "
                 "\"uniform\", min = 1048000, max = 1048576 }"),
      5, "sweep.concurrency");
  EXPECT_MENTIONS(drawn, "concurrency 64, ");
}

TEST(ExperimentRanges, ContextDistributionsAreChecked) {
  const auto minmax =
      refused(with_sweep("concurrency = [1]\ncontext = { distribution = \"uniform\", min = 900, "
                         "max = 100 }"),
              5, "sweep.context.max");
  EXPECT_MENTIONS(minmax, "max 100 is below min 900");
  refused(with_sweep("concurrency = [1]\ncontext = { distribution = \"uniform\", min = 9 }"), 5,
          "sweep.context.max");
  refused(with_sweep("concurrency = [1]\ncontext = { distribution = \"normal\", min = 9 }"), 5,
          "sweep.context.distribution");
  refused(with_sweep("concurrency = [1]\ncontext = { distribution = \"lognormal\", median = 10, "
                     "sigma = 0 }"),
          5, "sweep.context.sigma");
  const auto median = refused(
      with_sweep("concurrency = [1]\ncontext = { distribution = \"lognormal\", median = 10, "
                 "sigma = 1, min = 64 }"),
      5, "sweep.context.median");
  EXPECT_MENTIONS(median, "outside [min, max] = [64, 1048576]");
  refused(with_sweep("concurrency = [1]\n[sweep.context]\ndistribution = \"uniform\"\nmin = "
                     "1\nmax = 2\nseed = -1"),
          9, "sweep.context.seed");
}

std::string with_decision(const std::string& lines) {
  return kHeader + "[decision]\n" + lines + "\n" + kBaseline + kVariant;
}

TEST(ExperimentRanges, DecisionSettingsAreChecked) {
  const auto alpha = refused(with_decision("alpha = 0.6"), 8, "decision.alpha");
  EXPECT_MENTIONS(alpha, "0.6 is out of range: allowed (0, 0.5]");
  refused(with_decision("alpha = 0"), 8, "decision.alpha");
  refused(with_decision("min_effect_pct = -1"), 8, "decision.min_effect_pct");
  refused(with_decision("min_rounds = 1"), 8, "decision.min_rounds");
  refused(with_decision("time_budget_s = 0"), 8, "decision.time_budget_s");
  refused(with_decision("seed = -3"), 8, "decision.seed");
  refused(with_decision("correction = \"bonferroni\""), 8, "decision.correction");
  refused(with_decision("family = \"all\""), 8, "decision.family");
  refused(with_decision("alpha = nan"), 8, "decision.alpha");
}

// max_rounds ≥ min_rounds is ab::validate's rule; the message is validate's, with the line of
// the key it names and the values, including a default the user never wrote.
TEST(ExperimentRanges, CrossFieldRulesComeFromAbValidate) {
  const auto explicit_keys =
      refused(with_decision("min_rounds = 20\nmax_rounds = 10"), 9, "decision.max_rounds");
  EXPECT_MENTIONS(explicit_keys, "ab settings: max_rounds must be ≥ min_rounds");
  EXPECT_MENTIONS(explicit_keys, "min_rounds = 20, max_rounds = 10");
  const auto with_default = refused(with_decision("min_rounds = 200"), 7, "decision.max_rounds");
  EXPECT_MENTIONS(with_default, "max_rounds = 150 (the default)");
}

// The bootstrap's setting of the earlier statistics: refused with the reason, not as an
// unknown key, so that an old file says what changed.
TEST(ExperimentRanges, ResamplesIsRefusedWithTheReason) {
  const auto error = refused(with_decision("resamples = 2000"), 8, "decision.resamples");
  EXPECT_MENTIONS(error, "resamples is no longer used");
  EXPECT_MENTIONS(error, "Student's t on the trimmed mean");
}

TEST(ExperimentRanges, MeasureSettingsAreChecked) {
  refused(kHeader + "[measure]\nlaunches_per_sample = 0\n" + kBaseline + kVariant, 8,
          "measure.launches_per_sample");
  refused(kHeader + "[measure]\nmax_minutes = 0\n" + kBaseline + kVariant, 8,
          "measure.max_minutes");
  refused(kHeader + "[measure]\nthrottle_fraction = 1.5\n" + kBaseline + kVariant, 8,
          "measure.throttle_fraction");
  const auto instances = refused(
      kHeader + "[measure]\ninstances_per_arm = 0\n" + kBaseline + kVariant, 8,
      "measure.instances_per_arm");
  EXPECT_MENTIONS(instances, "[1, 64]");
  refused(kHeader + "[measure]\ninstances_per_arm = 65\n" + kBaseline + kVariant, 8,
          "measure.instances_per_arm");
}

TEST(ExperimentParse, HeatTurnsTheThrottleCheckOff) {
  const Experiment defaults = parse(kHeader + kBaseline + kVariant);
  EXPECT_EQ(defaults.measure.heat_ms, 0.0);
  EXPECT_EQ(defaults.measure.throttle_fraction, MeasureSettings{}.throttle_fraction);
  const Experiment heated = parse(kHeader + "[measure]\nheat_ms = 300\n" + kBaseline + kVariant);
  EXPECT_EQ(heated.measure.heat_ms, 300.0);
  EXPECT_EQ(heated.measure.throttle_fraction, 0.0);
  const Experiment explicit_zero = parse(
      kHeader + "[measure]\nheat_ms = 300\nthrottle_fraction = 0\n" + kBaseline + kVariant);
  EXPECT_EQ(explicit_zero.measure.throttle_fraction, 0.0);
  const Experiment no_heat = parse(
      kHeader + "[measure]\nheat_ms = 0\nthrottle_fraction = 0.8\n" + kBaseline + kVariant);
  EXPECT_EQ(no_heat.measure.throttle_fraction, 0.8);
}

TEST(ExperimentRanges, HeatIsCheckedAndRefusesAThrottleCheck) {
  const auto range = refused(kHeader + "[measure]\nheat_ms = 60001\n" + kBaseline + kVariant, 8,
                             "measure.heat_ms");
  EXPECT_MENTIONS(range, "[0, 60000]");
  refused(kHeader + "[measure]\nheat_ms = -1\n" + kBaseline + kVariant, 8, "measure.heat_ms");
  const auto both = refused(
      kHeader + "[measure]\nthrottle_fraction = 0.9\nheat_ms = 300\n" + kBaseline + kVariant,
      8, "measure.throttle_fraction");
  EXPECT_MENTIONS(both, "heat_ms = 300");
}

TEST(ExperimentRanges, TopLevelValuesAreChecked) {
  const auto name = refused("name = \"my study\"\n" + kHeader.substr(kHeader.find('\n') + 1) +
                                kBaseline + kVariant,
                            1, "name");
  EXPECT_MENTIONS(name, "letters, digits");
  refused("name = \"t\"\nhypothesis = \"  \"\n[sweep]\nconcurrency = [1]\n" + kBaseline +
              kVariant,
          2, "hypothesis");
  refused("backend = \"rocm\"\n" + kHeader + kBaseline + kVariant, 1, "backend");
  refused(kHeader + kBaseline + "[[variant]]\nname = \"x\"\nwarps = 8\nprediction = -100\n", 13,
          "variant[0].prediction");
}

// ---------------------------------------------------------------------------------------------
// Arms

TEST(ExperimentArms, UnknownVariantNamesListTheCompiledOnes) {
  const auto not_compiled = refused(
      kHeader + "[baseline]\nvariant = \"h32_t64_w8_s4\"\n" + kVariant, 8, "baseline.variant");
  EXPECT_MENTIONS(not_compiled, "'h32_t64_w8_s4' is not compiled into this build (compiled: "
                                "h16_t16_w4_s2, h16_t16_w8_s2, h16_t16_w4_s3, h64_t32_w8_s2)");
  EXPECT_MENTIONS(not_compiled, "MLALAB_VARIANTS");
  const auto malformed =
      refused(kHeader + kBaseline + "[[variant]]\nname = \"x\"\nvariant = \"fast\"\n", 12,
              "variant[0].variant");
  EXPECT_MENTIONS(malformed, "not a kernel variant name");
  // A typo of a compiled name says which one it most likely meant.
  const auto typo = refused(
      kHeader + "[baseline]\nvariant = \"h16_t16_w4_s5\"\n" + kVariant, 8, "baseline.variant");
  EXPECT_MENTIONS(typo, "'h16_t16_w4_s5' is not compiled into this build (did you mean "
                        "'h16_t16_w4_s2'?) (compiled: ");
}

TEST(ExperimentArms, TheRealRegistryIsTheDefaultList) {
  ParseOptions options = study_build();
  options.compiled_variants.reset();
  const auto error = refused(
      kHeader + "[baseline]\nvariant = \"h16_t16_w5_s2\"\n" + kVariant, 8, "baseline.variant",
      options);
  for (const auto& variant : kernels::compiled_variants()) EXPECT_MENTIONS(error, variant.name);
}

TEST(ExperimentArms, InvalidSplitPoliciesAreRefusedWithTheAllowedForms) {
  const auto error =
      refused(kHeader + "[baseline]\nvariant = \"h16_t16_w4_s2\"\nsplit = \"target:512\"\n" +
                  kVariant,
              9, "baseline.split");
  EXPECT_MENTIONS(error, "allowed: heuristic, fixed:N");
}

TEST(ExperimentArms, NamesAreUnique) {
  const auto error = refused(kHeader + kBaseline + kVariant + R"(
[[variant]]
name = "8 warps"
stages = 3
)",
                             16, "variant[1].name");
  EXPECT_MENTIONS(error, "the name '8 warps' is already used by the 1st [[variant]] (line 10)");
  refused(kHeader + kBaseline + "[[variant]]\nname = \"baseline\"\nwarps = 8\n", 11,
          "variant[0].name");
}

TEST(ExperimentArms, AVariantIdenticalToTheBaselineOrAnotherVariantIsRefused) {
  const auto same = refused(kHeader + kBaseline + "[[variant]]\nname = \"same\"\nwarps = 4\n", 10,
                            "variant[0]");
  EXPECT_MENTIONS(same, "same config as the baseline (h16_t16_w4_s2 target_ctas:512)");
  EXPECT_MENTIONS(same, "A/A comparison is built in");
  refused(kHeader + kBaseline + "[[variant]]\nname = \"nothing\"\n", 10, "variant[0]");
  const auto twice = refused(kHeader + kBaseline + kVariant +
                                 "[[variant]]\nname = \"again\"\nvariant = \"h16_t16_w8_s2\"\n",
                             14, "variant[1]");
  EXPECT_MENTIONS(twice, "same config as '8 warps'");
}

TEST(ExperimentArms, TheBaselineTakesNoPrediction) {
  refused(kHeader + kBaseline + "prediction = 1.0\n" + kVariant, 10, "baseline.prediction");
}

TEST(ExperimentArms, ABaselineWithoutAConfigIsRefused) {
  refused(kHeader + "[baseline]\nname = \"base\"\n" + kVariant, 7, "baseline");
}

TEST(ExperimentArms, TheBaselineMayBeRenamed) {
  const Experiment experiment =
      parse(kHeader + kBaseline + "name = \"production\"\n" + kVariant);
  EXPECT_EQ(experiment.baseline.name, "production");
}

// ---------------------------------------------------------------------------------------------
// Feasibility

TEST(ExperimentFeasibility, AnInfeasibleVariantIsRefusedWithTheReason) {
  ParseOptions options = study_build();
  std::vector<std::pair<VariantShape, Layout>> judged;
  options.feasibility = [&](const VariantShape& shape,
                            Layout layout) -> std::optional<std::string> {
    judged.emplace_back(shape, layout);
    if (shape.warps == 8) return "needs 100,032 B of shared memory, limit 99,999 B (test limit)";
    return std::nullopt;
  };
  const auto error = refused(kHeader + kBaseline + kVariant, 12, "variant[0].warps", options);
  EXPECT_MENTIONS(error, "h16_t16_w8_s2 (arm '8 warps') is infeasible at layout v4: needs "
                         "100,032 B of shared memory, limit 99,999 B (test limit)");
  ASSERT_EQ(judged.size(), 2u);
  EXPECT_EQ(judged[0].first, (VariantShape{.block_h = 16, .block_t = 16, .warps = 4, .stages = 2}));
  EXPECT_EQ(judged[0].second, Layout::kV4);
}

TEST(ExperimentFeasibility, AnInfeasibleBaselineIsRefusedAtItsVariantKey) {
  ParseOptions options = study_build();
  options.feasibility = [](const VariantShape&, Layout) -> std::optional<std::string> {
    return "spills 8 B/thread to local memory";
  };
  const auto error = refused(kHeader + kBaseline + kVariant, 8, "baseline.variant", options);
  EXPECT_MENTIONS(error, "(arm 'baseline') is infeasible");
}

TEST(ExperimentFeasibility, TheCpuBackendIsNotJudged) {
  ParseOptions options = study_build();
  options.feasibility = [](const VariantShape&, Layout) -> std::optional<std::string> {
    ADD_FAILURE() << "judged a CPU arm";
    return "no";
  };
  EXPECT_NO_THROW(parse(
      "backend = \"cpu\"\n" + kHeader + "[baseline]\nthreads = 2\n[[variant]]\nname = "
      "\"one\"\nthreads = 1\n",
      options));
}

// The parser on its own: the variants it accepts and the feasibility it applies are what it is
// given, nothing of this build or machine.
TEST(ExperimentParserAlone, TakesItsVariantsFromItsInputsAndJudgesNothingWithoutACheck) {
  const ParseInputs inputs{.compiled_variants = {"h16_t16_w4_s2", "h16_t16_w8_s2"},
                           .feasibility = {}};
  const Experiment experiment = parse_experiment_text(kHeader + kBaseline + kVariant, kPath,
                                                      inputs);
  EXPECT_EQ(experiment.variants.size(), 1u);
  // A variant outside the given list is unknown, whatever this build compiled.
  try {
    parse_experiment_text(kHeader + kBaseline + kVariant,
                          kPath, ParseInputs{.compiled_variants = {"h16_t16_w4_s2"},
                                             .feasibility = {}});
    FAIL() << "expected an error";
  } catch (const ExperimentError& error) {
    EXPECT_MENTIONS(error, "h16_t16_w8_s2");
  }
}

// A plan larger than any GPU's per-CTA shared memory can run nowhere; the default check
// refuses it on a machine with or without a GPU. (h64_t64_w8_s4 at V3 plans 402,176 B.)
TEST(ExperimentFeasibility, TheDefaultCheckRefusesAPlanNoGpuCanHold) {
  const auto check = default_feasibility_check();
  const auto reason = check(VariantShape{.block_h = 64, .block_t = 64, .warps = 8, .stages = 4}, Layout::kV3);
  ASSERT_TRUE(reason);
  EXPECT_NE(reason->find("B of shared memory"), std::string::npos) << *reason;
}

// ---------------------------------------------------------------------------------------------
// The CPU backend

std::string cpu_experiment(const std::string& arms) {
  return "backend = \"cpu\"\n" + kHeader + arms;
}

TEST(ExperimentCpuBackend, VariantsTakeTheBaselinesThreads) {
  const Experiment experiment = parse(cpu_experiment(R"([baseline]
variant = "cpu"
threads = 2

[[variant]]
name = "all threads"
threads = 0
)"));
  EXPECT_EQ(arm_config_text(experiment.baseline), "cpu threads=2");
  EXPECT_EQ(arm_config_text(experiment.variants[0]), "cpu threads=all");
}

TEST(ExperimentCpuBackend, KernelKnobsAndCudaVariantsAreRefused) {
  const auto knob = refused(cpu_experiment("[baseline]\nthreads = 2\n[[variant]]\nname = "
                                           "\"w\"\nwarps = 8\n"),
                            12, "variant[0].warps");
  EXPECT_MENTIONS(knob, "the cpu backend's only knob is threads");
  refused(cpu_experiment("[baseline]\nthreads = 2\nsplit = \"fixed:2\"\n[[variant]]\nname = "
                         "\"w\"\nthreads = 1\n"),
          10, "baseline.split");
  const auto cuda = refused(cpu_experiment("[baseline]\nvariant = \"h16_t16_w4_s2\"\n[[variant]]"
                                           "\nname = \"w\"\nthreads = 1\n"),
                            9, "baseline.variant");
  EXPECT_MENTIONS(cuda, "is a CUDA kernel");
  refused(cpu_experiment("[baseline]\nthreads = -1\n[[variant]]\nname = \"w\"\nthreads = 1\n"),
          9, "baseline.threads");
}

TEST(ExperimentCpuBackend, ThreadsOnTheCudaBackendAndTheCpuVariantAreRefused) {
  const auto threads = refused(kHeader + kBaseline + "threads = 2\n" + kVariant, 10,
                               "baseline.threads");
  EXPECT_MENTIONS(threads, "backend = \"cpu\"");
  refused(kHeader + "[baseline]\nvariant = \"cpu\"\n" + kVariant, 8, "baseline.variant");
}

// ---------------------------------------------------------------------------------------------
// Command arms

const std::string kCommandBaseline = R"([baseline]
command = "python3 bench_serving.py --concurrency $MLALAB_CONCURRENCY"
env = { VLLM_MLA_WARPS = "4", VLLM_OTHER = "x" }
metric = 'throughput: ([0-9.]+) tok/s'
better = "higher"
timeout_s = 300
)";

TEST(ExperimentCommandArms, VariantsTakeWhatTheyDoNotSetFromTheBaseline) {
  const Experiment experiment = parse(kHeader + kCommandBaseline + R"(
[[variant]]
name = "serving, 8 warps"
env = { VLLM_MLA_WARPS = "8" }
prediction = 10
)");
  const CommandArm& base = command(experiment.baseline);
  EXPECT_EQ(base.metric_regex, "throughput: ([0-9.]+) tok/s");
  EXPECT_EQ(base.direction, Direction::kHigherIsBetter);
  EXPECT_EQ(base.timeout_s, 300.0);
  const CommandArm& arm = command(experiment.variants[0]);
  EXPECT_EQ(arm.command, base.command);
  EXPECT_EQ(arm.metric_regex, base.metric_regex);
  EXPECT_EQ(arm.timeout_s, 300.0);
  EXPECT_EQ(arm.env, (std::map<std::string, std::string>{{"VLLM_MLA_WARPS", "8"},
                                                         {"VLLM_OTHER", "x"}}));
  EXPECT_EQ(arm_config_text(experiment.variants[0]),
            "VLLM_MLA_WARPS=8 VLLM_OTHER=x python3 bench_serving.py --concurrency "
            "$MLALAB_CONCURRENCY");
}

// Commands run no kernel backend: the experiment says so instead of defaulting to cuda, and a
// backend key, which would claim one, is refused.
TEST(ExperimentCommandArms, RunNoKernelBackend) {
  const Experiment experiment =
      parse(kHeader + kCommandBaseline + "[[variant]]\nname = \"v\"\nenv = { A = \"1\" }\n");
  EXPECT_EQ(experiment.backend, Backend::kNone);
  const auto error = refused("backend = \"cuda\"\n" + kHeader + kCommandBaseline +
                                 "[[variant]]\nname = \"v\"\nenv = { A = \"1\" }\n",
                             1, "backend");
  EXPECT_MENTIONS(error, "arms are commands");
}

TEST(ExperimentCommandArms, TheBaselineNeedsCommandMetricAndBetter) {
  refused(kHeader + "[baseline]\ncommand = \"x\"\nbetter = \"higher\"\n[[variant]]\nname = "
                    "\"v\"\ncommand = \"y\"\n",
          7, "baseline.metric");
  refused(kHeader + "[baseline]\ncommand = \"x\"\nmetric = '([0-9]+)'\n[[variant]]\nname = "
                    "\"v\"\ncommand = \"y\"\n",
          7, "baseline.better");
}

TEST(ExperimentCommandArms, BadRegexesAndDirectionsAreRefused) {
  const auto no_group = refused(
      kHeader + "[baseline]\ncommand = \"x\"\nmetric = 'tok/s'\nbetter = \"higher\"\n", 9,
      "baseline.metric");
  EXPECT_MENTIONS(no_group, "no capture group");
  const auto invalid = refused(
      kHeader + "[baseline]\ncommand = \"x\"\nmetric = '([0-9]+'\nbetter = \"higher\"\n", 9,
      "baseline.metric");
  EXPECT_MENTIONS(invalid, "not a valid regular expression");
  refused(kHeader + "[baseline]\ncommand = \"x\"\nmetric = '([0-9]+)'\nbetter = \"faster\"\n",
          10, "baseline.better");
  const auto disagree = refused(kHeader + kCommandBaseline +
                                    "[[variant]]\nname = \"v\"\ncommand = \"y\"\nbetter = "
                                    "\"lower\"\n",
                                16, "variant[0].better");
  EXPECT_MENTIONS(disagree, "one metric");
}

TEST(ExperimentCommandArms, EnvIsChecked) {
  const auto reserved = refused(kHeader + kCommandBaseline +
                                    "[[variant]]\nname = \"v\"\nenv = { MLALAB_CONCURRENCY = "
                                    "\"3\" }\n",
                                15, "variant[0].env.MLALAB_CONCURRENCY");
  EXPECT_MENTIONS(reserved, "set by mlalab");
  refused(kHeader + kCommandBaseline + "[[variant]]\nname = \"v\"\nenv = { WARPS = 8 }\n", 15,
          "variant[0].env.WARPS");
  refused(kHeader + kCommandBaseline + "[[variant]]\nname = \"v\"\nenv = { \"1X\" = \"8\" }\n",
          15, "variant[0].env.1X");
}

TEST(ExperimentCommandArms, KernelAndCommandArmsDoNotMix) {
  const auto mixed_keys = refused(kHeader + kBaseline +
                                      "[[variant]]\nname = \"v\"\ncommand = \"x\"\nwarps = 8\n",
                                  13, "variant[0].warps");
  EXPECT_MENTIONS(mixed_keys, "mixes a command-arm key ('command') with a kernel-arm key");
  const auto mixed_arms =
      refused(kHeader + kBaseline + "[[variant]]\nname = \"v\"\ncommand = \"x\"\n", 12,
              "variant[0].command");
  EXPECT_MENTIONS(mixed_arms, "is a command arm but the baseline is a kernel arm");
}

// ---------------------------------------------------------------------------------------------
// Loading

TEST(ExperimentLoad, AMissingFileIsRefusedWithItsPath) {
  try {
    load_experiment("/nonexistent/x.toml");
    FAIL() << "accepted";
  } catch (const ExperimentError& error) {
    EXPECT_EQ(error.path(), "/nonexistent/x.toml");
    EXPECT_MENTIONS(error, "/nonexistent/x.toml: cannot open the file");
  }
}

TEST(ExperimentLoad, KeepsTheTextAsRead) {
  const auto path = std::filesystem::temp_directory_path() / "mlalab_experiment_test.toml";
  const std::string text = kHeader + kBaseline + kVariant;
  std::ofstream(path) << text;
  const Experiment experiment = load_experiment(path.string(), study_build());
  std::filesystem::remove(path);
  EXPECT_EQ(experiment.source_text, text);
  EXPECT_EQ(experiment.source_path, path.string());
}

TEST(ExperimentErrorText, ReadsLikeACompilerMessage) {
  EXPECT_STREQ(ExperimentError("a.toml", 3, "sweep.heads", "bad").what(),
               "a.toml:3: sweep.heads: bad");
  EXPECT_STREQ(ExperimentError("a.toml", 0, "name", "missing").what(), "a.toml: name: missing");
  EXPECT_STREQ(ExperimentError("a.toml", 4, 7, "", "TOML syntax: x").what(),
               "a.toml:4:7: TOML syntax: x");
}

// ---------------------------------------------------------------------------------------------
// Tuned arms: table = "..." instead of a variant and split

// A small valid tuning table for the default sweep's problem (V4, 16 heads, page 64), written
// to a file of the test's own.
std::string write_tuning_table(const std::string& file_name, int num_heads = 16) {
  dispatch::TuningTable table;
  table.identity = {.gpu = "NVIDIA H200",
                    .sm_count = 132,
                    .compute_capability = 90,
                    .cuda_driver = "13.0",
                    .cuda_runtime = "13.0",
                    .layout = Layout::kV4,
                    .num_heads = num_heads,
                    .page_size = 64,
                    .candidates = {{.variant = "h16_t16_w4_s2", .code_hash = "abc"}}};
  table.commit = "0123456789ab";
  table.created_utc = "2026-12-01T00:00:00Z";
  table.batch_buckets = {1, 8};
  table.context_buckets = {4096};
  table.entries = {{.batch = 8,
                    .context = 4096,
                    .variant = "h16_t16_w4_s2",
                    .splits = 4,
                    .ranking = {{.variant = "h16_t16_w4_s2",
                                 .splits = 4,
                                 .us = 10.0,
                                 .us_low = 9.9,
                                 .us_high = 10.1,
                                 .samples = 3,
                                 .outcome = "winner"}},
                    .rounds = 3,
                    .seconds = 1.0,
                    .decision = "new"}};
  const auto folder = std::filesystem::temp_directory_path() / "mlalab-experiment-test";
  std::filesystem::create_directories(folder);
  const std::string path = (folder / file_name).string();
  dispatch::write_table(table, path);
  return path;
}

std::string tuned_variant(const std::string& table_path) {
  return "[[variant]]\nname = \"tuned\"\ntable = \"" + table_path + "\"\n";
}

TEST(ExperimentTunedArms, RunTheTablesChoiceAndSaySo) {
  const std::string table = write_tuning_table("tuned.json");
  const Experiment experiment = parse(kHeader + kBaseline + tuned_variant(table));
  ASSERT_EQ(experiment.variants.size(), 1u);
  EXPECT_EQ(kernel(experiment.variants[0]).table, table);
  EXPECT_EQ(kernel(experiment.variants[0]).variant, "");
  EXPECT_EQ(arm_config_text(experiment.variants[0]), "tuned by " + table);
}

TEST(ExperimentTunedArms, ARelativeTableIsInTheExperimentFilesFolder) {
  const std::string table = write_tuning_table("relative.json");
  const std::string folder = std::filesystem::path(table).parent_path().string();
  const Experiment experiment = parse_experiment(
      kHeader + kBaseline + tuned_variant("relative.json"), folder + "/x.toml", study_build());
  EXPECT_EQ(kernel(experiment.variants[0]).table, table);
}

TEST(ExperimentTunedArms, TakeNoVariantOrSplitOfTheirOwn) {
  const std::string table = write_tuning_table("with-knobs.json");
  const auto error = refused(kHeader + kBaseline + tuned_variant(table) + "warps = 8\n", 13,
                             "variant[0].warps");
  EXPECT_MENTIONS(error, "takes its variant and split from the table");
}

TEST(ExperimentTunedArms, AnUnreadableTableIsRefusedWithTheReason) {
  const auto error = refused(kHeader + kBaseline + tuned_variant("/nonexistent/t.json"), 12,
                             "variant[0].table");
  EXPECT_MENTIONS(error, "cannot read /nonexistent/t.json");
}

TEST(ExperimentTunedArms, ATableForAnotherProblemIsRefused) {
  const std::string table = write_tuning_table("h128.json", /*num_heads=*/128);
  const auto error =
      refused(kHeader + kBaseline + tuned_variant(table), 12, "variant[0].table");
  EXPECT_MENTIONS(error, "tuned for layout v4, 128 heads, page 64; the sweep is v4, 16 heads");
}

TEST(ExperimentTunedArms, TheCpuBackendRefusesThem) {
  const std::string table = write_tuning_table("cpu.json");
  const std::string text = "backend = \"cpu\"\n" + kHeader +
                           "[baseline]\nthreads = 2\n\n" + tuned_variant(table);
  const auto error = refused(text, 13, "variant[0].table");
  EXPECT_MENTIONS(error, "table");
}

}  // namespace
}  // namespace mlalab::ab

namespace mlalab::ab {
namespace {

// An arm of another build: its variant is that build's to know (none of this build's list
// applies), its build is its own (a variant does not inherit the baseline's), and a build
// that is not an executable file is refused where it is named.
TEST(ExperimentPython, VariantsInheritTheCallableAndLayerTheirParamsOnTheBaselines) {
  const Experiment experiment = parse(kHeader + R"([baseline]
python = "mlalab.triton_decode:arm"
params = { block_n = 16, num_warps = 4, target_ctas = 512 }
[[variant]]
name = "8 warps"
params = { num_warps = 8 }
[[variant]]
name = "mlalab"
variant = "h16_t16_w4_s2"
split = "target_ctas:512"
[[variant]]
name = "own kernel"
python = "my_kernels.mla:launcher"
)");
  const auto& baseline = std::get<KernelArm>(experiment.baseline.config);
  EXPECT_EQ(baseline.python, "mlalab.triton_decode:arm");
  EXPECT_EQ(baseline.params, R"({"block_n":16,"num_warps":4,"target_ctas":512})");
  EXPECT_EQ(worker_of(baseline), kPythonWorker);
  const auto& warps = std::get<KernelArm>(experiment.variants[0].config);
  EXPECT_EQ(warps.python, "mlalab.triton_decode:arm");
  EXPECT_EQ(warps.params, R"({"block_n":16,"num_warps":8,"target_ctas":512})");
  EXPECT_EQ(arm_config_text(experiment.variants[0]),
            R"(python mlalab.triton_decode:arm {"block_n":16,"num_warps":8,"target_ctas":512})");
  const auto& mlalab = std::get<KernelArm>(experiment.variants[1].config);
  EXPECT_EQ(mlalab.python, "");
  EXPECT_EQ(mlalab.variant, "h16_t16_w4_s2");
  EXPECT_EQ(worker_of(mlalab), "");
  const auto& own = std::get<KernelArm>(experiment.variants[2].config);
  EXPECT_EQ(own.python, "my_kernels.mla:launcher");
  EXPECT_EQ(own.params, "{}");  // an arm naming its own callable starts from no params
}

TEST(ExperimentPython, RefusesWhatAPythonArmCannotMean) {
  const std::string python_baseline = R"([baseline]
python = "mlalab.triton_decode:arm"
)";
  struct Case {
    std::string text;
    int line;
    std::string field;
    std::string mention;
  };
  const std::vector<Case> cases = {
      {"[baseline]\npython = \"mlalab.triton_decode\"\n", 8, "baseline.python",
       "is not \"module:function\""},
      {python_baseline + "[[variant]]\nname = \"x\"\nparams = { num_warps = 8 }\n"
                         "split = \"heuristic\"\n",
       12, "variant[0].split", "'split' chooses an mlalab kernel"},
      {python_baseline + "[[variant]]\nname = \"x\"\nparams = 8\n", 11, "variant[0].params",
       "must be a table of the callable's parameters"},
      {kBaseline + "[[variant]]\nname = \"x\"\nparams = { num_warps = 8 }\n", 12,
       "variant[0].params", "params are a Python arm's"},
      {python_baseline + "[[variant]]\nname = \"x\"\nsplit = \"heuristic\"\n", 9, "variant[0]",
       "names no variant to run"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text);
    EXPECT_MENTIONS(refused(kHeader + c.text, c.line, c.field), c.mention);
  }
}

TEST(ExperimentBuild, NamesAnotherBinaryWhoseVariantsThisBuildDoesNotJudge) {
  const Experiment experiment = parse(kHeader + R"([baseline]
variant = "h16_t16_w4_s2"
split = "heuristic"
build = ")" + std::string(MLALAB_BINARY) + R"("
[[variant]]
name = "this build"
prediction = 0.0
[[variant]]
name = "other variant, other build"
variant = "h64_t64_w8_s4"
build = ")" + std::string(MLALAB_BINARY) + R"("
)");
  const auto& baseline = std::get<KernelArm>(experiment.baseline.config);
  EXPECT_EQ(baseline.build, MLALAB_BINARY);
  const auto& here = std::get<KernelArm>(experiment.variants[0].config);
  EXPECT_EQ(here.build, "");
  EXPECT_EQ(here.variant, "h16_t16_w4_s2");
  const auto& other = std::get<KernelArm>(experiment.variants[1].config);
  EXPECT_EQ(other.variant, "h64_t64_w8_s4");  // not in study_build()'s list
  EXPECT_EQ(other.build, MLALAB_BINARY);
  EXPECT_EQ(arm_config_text(experiment.variants[1]),
            std::string("h64_t64_w8_s4 heuristic in ") + MLALAB_BINARY);

  const auto error = refused(kHeader + kBaseline + R"([[variant]]
name = "old"
build = "no/such/mlalab"
)",
                             12, "variant[0].build");
  EXPECT_MENTIONS(error, "is not an executable file");
}

}  // namespace
}  // namespace mlalab::ab
