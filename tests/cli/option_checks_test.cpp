#include "cli/option_checks.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ab/experiment.h"
#include "kernels/registry.h"

namespace mlalab::cli {
namespace {

// What a check says about `text` given to `option`: the refusal, or "" when it accepts it.
template <typename Value>
std::string refusal(const OptionCheck<Value>& check, const std::string& option,
                    const std::string& text) {
  std::string error;
  return check(option, text, &error) ? std::string{} : error;
}

TEST(RangeText, PrintsTheLargestInt64AsTwoToThe63Excluded) {
  EXPECT_EQ(range_text({.low = 1, .high = 128}), "[1, 128]");
  EXPECT_EQ(range_text(kSeedRange), "[0, 2^63)");
  EXPECT_EQ(range_text({.low = 1, .high = 1048576, .unit = "bytes"}), "[1, 1048576] bytes");
}

TEST(IntegerIn, NamesTheOptionTheValueAndTheRange) {
  const auto heads = integer_in({.low = 1, .high = 128});
  std::string error;
  EXPECT_EQ(heads("--heads", "16", &error), 16);
  EXPECT_EQ(heads("--heads", "128", &error), 128);
  EXPECT_EQ(refusal(heads, "--heads", "0"), "--heads 0: allowed [1, 128]");
  EXPECT_EQ(refusal(heads, "--heads", "129"), "--heads 129: allowed [1, 128]");
  EXPECT_EQ(refusal(heads, "--heads", "abc"), "--heads abc: not an integer; allowed [1, 128]");
  EXPECT_EQ(refusal(heads, "--heads", "1.5"), "--heads 1.5: not an integer; allowed [1, 128]");
  EXPECT_EQ(refusal(heads, "--heads", ""), "--heads : not an integer; allowed [1, 128]");
}

// The cases of issue 7: -1 and 99999999999999999999 once became 2^64 − 1 without a word.
TEST(IntegerIn, SeedsAreTheNonNegativeInt64s) {
  const auto seed = integer_in(kSeedRange);
  std::string error;
  EXPECT_EQ(seed("--seed", "0", &error), 0);
  // 2^63 − 1 = 9223372036854775807, the largest allowed; one more is out.
  EXPECT_EQ(seed("--seed", "9223372036854775807", &error),
            std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(refusal(seed, "--seed", "9223372036854775808"),
            "--seed 9223372036854775808: allowed [0, 2^63)");
  EXPECT_EQ(refusal(seed, "--seed", "-1"), "--seed -1: allowed [0, 2^63)");
  EXPECT_EQ(refusal(seed, "--seed", "99999999999999999999"),
            "--seed 99999999999999999999: allowed [0, 2^63)");
  EXPECT_EQ(refusal(seed, "--seed", "-99999999999999999999"),
            "--seed -99999999999999999999: allowed [0, 2^63)");
  EXPECT_EQ(refusal(seed, "--seed", "abc"), "--seed abc: not an integer; allowed [0, 2^63)");
}

// bench and tune read --lengths alike.
TEST(SequenceLengths, AcceptsTheTunersFormsAndNamesThemWhenRefusing) {
  const auto lengths = sequence_lengths();
  EXPECT_EQ(refusal(lengths, "--lengths", "equal"), "");
  EXPECT_EQ(refusal(lengths, "--lengths", "uniform"), "");
  EXPECT_EQ(refusal(lengths, "--lengths", "uniform:0.125"), "");
  EXPECT_EQ(refusal(lengths, "--lengths", "uniform:2"),
            "--lengths uniform:2: allowed equal, uniform, or uniform:F with F in (0, 1], e.g. "
            "uniform:0.125");
  EXPECT_EQ(refusal(lengths, "--lengths", "lognormal"),
            "--lengths lognormal: allowed equal, uniform, or uniform:F with F in (0, 1], e.g. "
            "uniform:0.125");
}

TEST(PowerOfTwoIn, RefusesOtherIntegers) {
  const auto page_size = power_of_two_in({.low = 1, .high = 128});
  std::string error;
  EXPECT_EQ(page_size("--page-size", "1", &error), 1);
  EXPECT_EQ(page_size("--page-size", "64", &error), 64);
  EXPECT_EQ(refusal(page_size, "--page-size", "3"),
            "--page-size 3: allowed a power of two in [1, 128]");
  EXPECT_EQ(refusal(page_size, "--page-size", "256"),
            "--page-size 256: allowed a power of two in [1, 128]");
  EXPECT_EQ(refusal(page_size, "--page-size", "0"),
            "--page-size 0: allowed a power of two in [1, 128]");
  EXPECT_EQ(refusal(page_size, "--page-size", "x"),
            "--page-size x: not an integer; allowed a power of two in [1, 128]");
}

TEST(IntegerListIn, NamesTheElementAtFault) {
  const auto batches = integer_list_in({.low = 1, .high = 65536});
  std::string error;
  EXPECT_EQ(batches("--batch", "1,8,64", &error), (std::vector<int>{1, 8, 64}));
  EXPECT_EQ(batches("--batch", "7", &error), (std::vector<int>{7}));
  const std::string allowed = "allowed a comma-separated list of integers in [1, 65536]";
  EXPECT_EQ(refusal(batches, "--batch", "1,0,8"), "--batch 1,0,8: 0 is out of range; " + allowed);
  EXPECT_EQ(refusal(batches, "--batch", "1,x"), "--batch 1,x: 'x' is not an integer; " + allowed);
  EXPECT_EQ(refusal(batches, "--batch", "1,,8"), "--batch 1,,8: '' is not an integer; " + allowed);
}

// The cases of issue 7: 0 and -1 printed "Value 0 not in range 0.000000 to 1797693…" with ~300
// digits; abc as well.
TEST(RunMinutes, AllowsAboveZeroUpToAWeek) {
  const auto minutes = run_minutes();
  std::string error;
  EXPECT_EQ(minutes("--max-minutes", "0.3", &error), 0.3);
  // A week: 7 × 24 × 60 = 10080 minutes, the last allowed.
  EXPECT_EQ(minutes("--max-minutes", "10080", &error), 10080.0);
  EXPECT_EQ(refusal(minutes, "--max-minutes", "10080.5"),
            "--max-minutes 10080.5: allowed (0, 10080] minutes");
  EXPECT_EQ(refusal(minutes, "--max-minutes", "0"),
            "--max-minutes 0: allowed (0, 10080] minutes");
  EXPECT_EQ(refusal(minutes, "--max-minutes", "-1"),
            "--max-minutes -1: allowed (0, 10080] minutes");
  EXPECT_EQ(refusal(minutes, "--max-minutes", "1e999"),
            "--max-minutes 1e999: allowed (0, 10080] minutes");
  EXPECT_EQ(refusal(minutes, "--max-minutes", "nan"),
            "--max-minutes nan: allowed (0, 10080] minutes");
  EXPECT_EQ(refusal(minutes, "--max-minutes", "abc"),
            "--max-minutes abc: not a number; allowed (0, 10080] minutes");
  EXPECT_EQ(refusal(minutes, "--max-minutes", "5min"),
            "--max-minutes 5min: not a number; allowed (0, 10080] minutes");
}

TEST(HeatMilliseconds, AllowsZeroUpToAMinute) {
  const auto heat = heat_milliseconds();
  std::string error;
  EXPECT_EQ(heat("--heat-ms", "0", &error), 0.0);
  EXPECT_EQ(heat("--heat-ms", "300", &error), 300.0);
  EXPECT_EQ(heat("--heat-ms", "60000", &error), 60000.0);
  EXPECT_EQ(refusal(heat, "--heat-ms", "60000.5"), "--heat-ms 60000.5: allowed [0, 60000] ms");
  EXPECT_EQ(refusal(heat, "--heat-ms", "-1"), "--heat-ms -1: allowed [0, 60000] ms");
  EXPECT_EQ(refusal(heat, "--heat-ms", "nan"), "--heat-ms nan: allowed [0, 60000] ms");
  EXPECT_EQ(refusal(heat, "--heat-ms", "1s"), "--heat-ms 1s: not a number; allowed [0, 60000] ms");
}

TEST(LaunchesPerSample, AllowsOneUpToTheFilesBound) {
  const auto launches = launches_per_sample();
  std::string error;
  EXPECT_EQ(launches("--launches-per-sample", "1", &error), 1);
  EXPECT_EQ(launches("--launches-per-sample", "500", &error), 500);
  EXPECT_EQ(refusal(launches, "--launches-per-sample", "0"),
            "--launches-per-sample 0: allowed [1, 100000]");
  EXPECT_EQ(refusal(launches, "--launches-per-sample", "100001"),
            "--launches-per-sample 100001: allowed [1, 100000]");
  EXPECT_EQ(refusal(launches, "--launches-per-sample", "2.5"),
            "--launches-per-sample 2.5: not an integer; allowed [1, 100000]");
}

// What `mlalab ab` accepts on its command line, the experiment file accepts in its settings:
// the bounds of kMaxRunMinutes and kSeedRange, written into a file, parse; one step past them
// does not.
TEST(AbOverrideRanges, AgreeWithTheExperimentFile) {
  const auto parse_with = [](const std::string& settings) {
    const std::string text = "name = \"t\"\nhypothesis = \"h\"\nbackend = \"cpu\"\n" + settings +
                             "[sweep]\nconcurrency = [1]\n"
                             "[baseline]\nvariant = \"cpu\"\nthreads = 2\n"
                             "[[variant]]\nname = \"1 thread\"\nthreads = 1\n";
    return ab::parse_experiment(text, "t.toml", ab::ParseOptions{});
  };
  const std::string max_minutes = fmt::format("{:g}", kMaxRunMinutes);
  EXPECT_EQ(parse_with("[measure]\nmax_minutes = " + max_minutes + "\n").measure.max_minutes,
            kMaxRunMinutes);
  EXPECT_THROW(parse_with("[measure]\nmax_minutes = " + max_minutes + ".5\n"),
               ab::ExperimentError);
  EXPECT_THROW(parse_with("[measure]\nmax_minutes = 0\n"), ab::ExperimentError);

  const std::string max_seed = std::to_string(kSeedRange.high);
  EXPECT_EQ(parse_with("[decision]\nseed = " + max_seed + "\n").stats.seed,
            static_cast<std::uint64_t>(kSeedRange.high));
  EXPECT_THROW(parse_with("[decision]\nseed = -1\n"), ab::ExperimentError);

  const std::string max_heat = fmt::format("{:g}", ab::kMaxHeatMs);
  EXPECT_EQ(parse_with("[measure]\nheat_ms = " + max_heat + "\n").measure.heat_ms,
            ab::kMaxHeatMs);
  EXPECT_THROW(parse_with("[measure]\nheat_ms = " + max_heat + ".5\n"), ab::ExperimentError);

  const std::string max_launches = std::to_string(ab::kMaxLaunchesPerSample);
  EXPECT_EQ(parse_with("[measure]\nlaunches_per_sample = " + max_launches + "\n")
                .measure.launches_per_sample,
            ab::kMaxLaunchesPerSample);
  EXPECT_THROW(parse_with("[measure]\nlaunches_per_sample = " + max_launches + "1\n"),
               ab::ExperimentError);
  EXPECT_THROW(parse_with("[measure]\nlaunches_per_sample = 0\n"), ab::ExperimentError);
}

// A folder of its own under the test temp folder, removed afterwards.
class OutputPaths : public testing::Test {
 protected:
  void SetUp() override {
    folder_ = std::filesystem::path(testing::TempDir()) /
              ("mlalab_option_checks_" + std::to_string(getpid()));
    std::filesystem::create_directories(folder_);
    std::ofstream(folder_ / "file.txt") << "not a folder";
  }
  void TearDown() override {
    std::filesystem::permissions(folder_, std::filesystem::perms::owner_all);
    std::filesystem::remove_all(folder_);
  }
  std::string path(const std::string& name) const { return (folder_ / name).string(); }

  std::filesystem::path folder_;
};

TEST_F(OutputPaths, AFileNeedsAnExistingWritableFolder) {
  const auto file = output_file();
  std::string error;
  EXPECT_EQ(file("--json", path("x.json"), &error), path("x.json"));
  EXPECT_EQ(file("--json", path("file.txt"), &error), path("file.txt"));  // overwritten
  EXPECT_EQ(refusal(file, "--json", path("missing/x.json")),
            "--json " + path("missing/x.json") + ": no such folder " + path("missing"));
  EXPECT_EQ(refusal(file, "--json", "/nonexistent/x.json"),
            "--json /nonexistent/x.json: no such folder /nonexistent");
  EXPECT_EQ(refusal(file, "--json", path("file.txt/x.json")),
            "--json " + path("file.txt/x.json") + ": " + path("file.txt") + " is not a folder");
  EXPECT_EQ(refusal(file, "--json", folder_.string()),
            "--json " + folder_.string() + ": is a folder, not a file");
  EXPECT_EQ(refusal(file, "--json", ""), "--json: no file name given");
}

TEST_F(OutputPaths, AFolderIsCreatedUnderTheNearestExistingFolder) {
  const auto out = output_folder();
  std::string error;
  EXPECT_EQ(out("--out", folder_.string(), &error), folder_.string());
  EXPECT_EQ(out("--out", path("new/deeper"), &error), path("new/deeper"));
  EXPECT_EQ(refusal(out, "--out", path("file.txt")),
            "--out " + path("file.txt") + ": " + path("file.txt") + " is not a folder");
  EXPECT_EQ(refusal(out, "--out", path("file.txt/runs")),
            "--out " + path("file.txt/runs") + ": cannot create it: " + path("file.txt") +
                " is not a folder");
  EXPECT_EQ(refusal(out, "--out", ""), "--out: no folder given");
}

TEST_F(OutputPaths, AReadOnlyFolderIsRefused) {
  if (geteuid() == 0) GTEST_SKIP() << "root may write into a read-only folder";
  std::filesystem::permissions(folder_, std::filesystem::perms::owner_read |
                                            std::filesystem::perms::owner_exec);
  EXPECT_EQ(refusal(output_file(), "--json", path("x.json")),
            "--json " + path("x.json") + ": folder " + folder_.string() + " is not writable");
  EXPECT_EQ(refusal(output_folder(), "--out", path("runs")),
            "--out " + path("runs") + ": cannot create it: folder " + folder_.string() +
                " is not writable");
}

// The binding: the value lands in the target; a refusal stops the parse with the message as
// it is, with nothing of CLI11's own prefix.
// --variant: every name of the list must be compiled; a typo of one says which it meant.
TEST(VariantList, NamesTheUnknownVariantAndTheOneItMostLikelyMeant) {
  const auto& compiled = kernels::compiled_variants();
  ASSERT_FALSE(compiled.empty());
  const std::string name = compiled.front().name;
  std::string typo = name;
  typo.back() = typo.back() == '9' ? '8' : '9';  // the stage digit: no variant has 8 or 9
  CLI::Validator validator = variant_list_validator();
  std::string accepted = name + ",all";
  EXPECT_EQ(validator(accepted), "");
  std::string refused = "all," + typo;
  const std::string error = validator(refused);
  EXPECT_NE(error.find(fmt::format("unknown variant '{}' (did you mean '", typo)),
            std::string::npos)
      << error;
  std::string far = "nothing_like_a_variant";
  EXPECT_EQ(validator(far).find("did you mean"), std::string::npos) << validator(far);
}

TEST(AddCheckedOption, StoresTheValueOrThrowsTheRefusal) {
  CLI::App app;
  std::optional<std::uint64_t> seed;
  add_checked_option(app, "--seed", seed, integer_in(kSeedRange), "seed");

  app.parse(std::vector<std::string>{"7", "--seed"});  // CLI11 reads the vector backwards
  EXPECT_EQ(seed, 7u);

  try {
    app.parse(std::vector<std::string>{"-1", "--seed"});
    FAIL() << "--seed -1 was accepted";
  } catch (const CLI::ValidationError& error) {
    EXPECT_STREQ(error.what(), "--seed -1: allowed [0, 2^63)");
  }
}

}  // namespace
}  // namespace mlalab::cli
