#include "ab/child_process.h"

#include <signal.h>

#include <fmt/format.h>

#include <cstring>
#include <string_view>

extern char** environ;

namespace mlalab::ab {

std::string errno_text(const char* what, int error) {
  return fmt::format("{}: {}", what, std::strerror(error));
}

std::vector<std::string> child_environment(const std::map<std::string, std::string>& overrides) {
  std::vector<std::string> entries;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const auto equals = text.find('=');
    const std::string name(text.substr(0, equals));
    if (!overrides.contains(name)) entries.emplace_back(text);
  }
  for (const auto& [name, value] : overrides) entries.push_back(name + "=" + value);
  return entries;
}

int spawn_in_own_group(const std::string& path, std::vector<std::string> argv,
                       std::vector<std::string> environment,
                       const posix_spawn_file_actions_t* actions, pid_t* pid) {
  std::vector<char*> argv_pointers;
  for (auto& argument : argv) argv_pointers.push_back(argument.data());
  argv_pointers.push_back(nullptr);
  std::vector<char*> envp;
  for (auto& entry : environment) envp.push_back(entry.data());
  envp.push_back(nullptr);

  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  posix_spawnattr_setpgroup(&attributes, 0);
  sigset_t default_signals;
  sigemptyset(&default_signals);
  sigaddset(&default_signals, SIGINT);
  sigaddset(&default_signals, SIGTERM);
  sigaddset(&default_signals, SIGPIPE);
  posix_spawnattr_setsigdefault(&attributes, &default_signals);
  sigset_t no_signals;
  sigemptyset(&no_signals);
  posix_spawnattr_setsigmask(&attributes, &no_signals);
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF |
                                            POSIX_SPAWN_SETSIGMASK);
  const int status = posix_spawn(pid, path.c_str(), actions, &attributes, argv_pointers.data(),
                                 envp.data());
  posix_spawnattr_destroy(&attributes);
  return status;
}

}  // namespace mlalab::ab
