#include "core/atomic_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace mlalab {
namespace {

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string read(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(WriteFileAtomically, WritesAndReplacesLeavingNoTemporary) {
  const fs::path dir = fresh_dir("mlalab_atomic_file_test");
  const fs::path path = dir / "table.json";
  write_file_atomically(path, [](std::ostream& out) { out << "first"; });
  write_file_atomically(path, [](std::ostream& out) { out << "second"; });
  EXPECT_EQ(read(path), "second");
  EXPECT_FALSE(fs::exists(atomic_temporary_of(path)));
  EXPECT_EQ(atomic_temporary_of(path), dir / ".table.json.tmp");
  fs::remove_all(dir);
}

TEST(WriteFileAtomically, AFailingWriterKeepsTheOldFileAndSaysWhy) {
  const fs::path dir = fresh_dir("mlalab_atomic_file_fail_test");
  const fs::path path = dir / "report.md";
  write_file_atomically(path, [](std::ostream& out) { out << "the previous version"; });
  try {
    write_file_atomically(path, [](std::ostream& out) {
      out << "half a fi";
      throw std::runtime_error("out of ideas");
    });
    FAIL() << "expected an error";
  } catch (const std::runtime_error& error) {
    EXPECT_EQ(std::string(error.what()), "writing " + path.string() + ": out of ideas");
  }
  EXPECT_EQ(read(path), "the previous version");
  EXPECT_FALSE(fs::exists(atomic_temporary_of(path)));
  fs::remove_all(dir);
}

TEST(WriteFileAtomically, AMissingFolderIsNamedWithTheReason) {
  const fs::path path = fs::temp_directory_path() / "mlalab_no_such_folder" / "x.json";
  try {
    write_file_atomically(path, [](std::ostream& out) { out << "x"; });
    FAIL() << "expected an error";
  } catch (const std::runtime_error& error) {
    EXPECT_EQ(std::string(error.what()),
              "writing " + path.string() + ": cannot open " + atomic_temporary_of(path).string() +
                  " for writing: No such file or directory");
  }
}

}  // namespace
}  // namespace mlalab
