#pragma once
// SHA-256 of a byte string (OpenSSL), as 64 lowercase hex digits: the code hash of a
// command arm (run_record.h's ArmRecord::code_hash), so that a rerun can tell whether it runs
// the same command. Kernel arms take theirs from the registry (the SASS, hashed at build time).
#include <string>
#include <string_view>

namespace mlalab::ab {

std::string sha256_hex(std::string_view bytes);

}  // namespace mlalab::ab
