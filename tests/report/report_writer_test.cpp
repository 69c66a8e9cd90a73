#include "report/report_writer.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <ostream>
#include <set>
#include <stdexcept>
#include <string>

#include "report/synthetic_record.h"

namespace mlalab::report {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::path(::testing::TempDir()) / name;
  fs::remove_all(dir);
  return dir;
}

std::set<std::string> files_in(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename());
  return names;
}

std::string read(const fs::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(WriteReport, WritesTheFiveFilesAndNoTemporaries) {
  const fs::path dir = fresh_dir("mlalab_report_writer_test") / "nested";
  ab::RunRecord record = testing::synthetic_record();
  record.partial = true;
  record.partial_reason = "interrupted";
  write_report(record, dir);
  EXPECT_EQ(files_in(dir), (std::set<std::string>{"report.md", "results.json", "throughput.svg",
                                                  "change.svg", "fingerprint.json"}));
  EXPECT_NE(read(dir / "report.md").find("PARTIAL RESULTS: interrupted"), std::string::npos);

  // Written again during the run, then at its end: each write replaces the files whole.
  record.partial = false;
  write_report(record, dir);
  EXPECT_EQ(read(dir / "report.md").find("PARTIAL"), std::string::npos);
  EXPECT_EQ(files_in(dir).size(), 5u);
  fs::remove_all(dir.parent_path());
}

// report.md shows every picture the report writes, each with a line of caption below it.
TEST(WriteReport, ReportMdShowsEveryPicture) {
  const fs::path dir = fresh_dir("mlalab_report_writer_picture_test");
  write_report(testing::synthetic_record(), dir);
  const std::string report = read(dir / "report.md");
  int pictures = 0;
  for (const auto& writer : all_writers()) {
    const std::string name = writer->file_name();
    if (!name.ends_with(".svg")) continue;
    ++pictures;
    const std::size_t link = report.find("](" + name + ")\n\n");
    ASSERT_NE(link, std::string::npos) << name;
    const std::size_t caption = report.find("\n\n", link) + 2;
    EXPECT_GT(report.find('\n', caption), caption) << name;  // a non-empty line
    EXPECT_NE(report.compare(caption, 2, "!["), 0) << name;  // and not the next picture
  }
  EXPECT_EQ(pictures, 2);
  fs::remove_all(dir);
}

class FailingWriter final : public ReportWriter {
 public:
  std::string file_name() const override { return "broken.txt"; }
  void write(const ab::RunRecord&, std::ostream& out) const override {
    out << "half a fi";
    throw std::runtime_error("out of ideas");
  }
};

TEST(WriteFile, AFailedWriteKeepsThePreviousFileAndLeavesNoTemporary) {
  const fs::path dir = fresh_dir("mlalab_report_writer_fail_test");
  fs::create_directories(dir);
  {
    std::ofstream(dir / "broken.txt") << "the previous version";
  }
  try {
    write_file(FailingWriter(), ab::RunRecord{}, dir);
    FAIL() << "expected an error";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("broken.txt: out of ideas"), std::string::npos)
        << error.what();
  }
  EXPECT_EQ(read(dir / "broken.txt"), "the previous version");
  EXPECT_EQ(files_in(dir), (std::set<std::string>{"broken.txt"}));
  fs::remove_all(dir);
}

TEST(WriteReport, AFolderThatCannotBeCreatedIsAnError) {
  const fs::path dir = fresh_dir("mlalab_report_writer_file_test");
  fs::create_directories(dir);
  {
    std::ofstream(dir / "a_file") << "x";
  }
  EXPECT_THROW(write_report(testing::synthetic_record(), dir / "a_file" / "report"),
               std::runtime_error);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace mlalab::report
