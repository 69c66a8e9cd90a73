#pragma once
// Files written whole or not at all: reports, tuning tables, benchmark JSON.
#include <filesystem>
#include <functional>
#include <ostream>

namespace mlalab {

// `write` fills a hidden temporary beside `path` (".<name>.tmp", in the same folder), which
// then replaces `path` by a rename: a reader, or a run interrupted mid-write, sees the old file
// or the new one, never half of one. On any failure (the temporary cannot be opened, `write`
// throws, the write or the rename fails) the temporary is removed, `path` is left as it was,
// and std::runtime_error says "writing <path>: <what failed>".
void write_file_atomically(const std::filesystem::path& path,
                           const std::function<void(std::ostream&)>& write);

// The temporary write_file_atomically uses for `path`.
std::filesystem::path atomic_temporary_of(const std::filesystem::path& path);

}  // namespace mlalab
