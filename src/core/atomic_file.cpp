#include "core/atomic_file.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>

namespace mlalab {

std::filesystem::path atomic_temporary_of(const std::filesystem::path& path) {
  return path.parent_path() / fmt::format(".{}.tmp", path.filename().string());
}

void write_file_atomically(const std::filesystem::path& path,
                           const std::function<void(std::ostream&)>& write) {
  const std::filesystem::path temporary = atomic_temporary_of(path);
  try {
    {
      std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
      if (!out) {
        throw std::runtime_error(fmt::format("cannot open {} for writing: {}", temporary.string(),
                                             std::strerror(errno)));
      }
      write(out);
      out.close();
      if (!out) {
        throw std::runtime_error(fmt::format("the write failed: {}", std::strerror(errno)));
      }
    }
    std::error_code error;
    std::filesystem::rename(temporary, path, error);
    if (error) throw std::runtime_error("cannot replace it: " + error.message());
  } catch (const std::exception& error) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw std::runtime_error(fmt::format("writing {}: {}", path.string(), error.what()));
  }
}

}  // namespace mlalab
