#pragma once
// The exit statuses every subcommand shares: 0 success, 2 a usage error or an error that
// stopped mlalab before or while it ran (the message on stderr). 1 is each subcommand's own
// negative answer (bench: a variant INVALID or failed; verify: differences; ab: a variant
// REJECTED), and ab adds 3 and 4 (ab/runner.h).
#include "ab/runner.h"

namespace mlalab::cli {

inline constexpr int kExitOk = ab::kExitOk;
inline constexpr int kExitError = ab::kExitError;

}  // namespace mlalab::cli
