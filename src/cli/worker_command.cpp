#include "cli/worker_command.h"

#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <string>

#include "ab/arms.h"
#include "ab/worker.h"
#include "bench/device_info.h"
#include "cli/exit_status.h"
#include "core/backend.h"

namespace mlalab::cli {
namespace {

int run_worker(const std::string& backend_text) {
  const Backend backend = parse_backend(backend_text).value_or(Backend::kCuda);
  std::unique_ptr<ab::KernelBackend> kernels;
  try {
    if (backend == Backend::kCpu) {
      kernels = ab::make_cpu_backend();
    } else {
      std::string why_not;
      const auto device = bench::query_device(&why_not);
      if (!device) {
        fmt::print(stderr, "mlalab worker: no usable CUDA device ({})\n", why_not);
        return kExitError;
      }
      kernels = ab::make_cuda_backend(*device);
    }
  } catch (const std::exception& error) {
    fmt::print(stderr, "mlalab worker: {}\n", error.what());
    return kExitError;
  }
  ab::serve_worker(*kernels, std::cin, std::cout);
  return 0;
}

}  // namespace

CLI::App* add_worker_command(CLI::App& app, int& exit_code) {
  auto backend = std::make_shared<std::string>("cuda");
  CLI::App* command = app.add_subcommand(
      "worker",
      "Serve this build's kernels to another build's `mlalab ab` (an arm with build = this "
      "binary); started by the lab, answers JSON lines on stdin/stdout");
  command->add_option("--backend", *backend, "cuda or cpu")
      ->check(CLI::IsMember({"cuda", "cpu"}))
      ->capture_default_str();
  // The lab starts it; the top-level examples and exit statuses are not this one's.
  command->footer(
      "Not run by hand: mlalab ab starts it for an arm whose build is this binary, and it\n"
      "exits when its stdin closes. Exit status: 0 stdin closed; 2 an error.");
  command->callback([backend, &exit_code] { exit_code = run_worker(*backend); });
  return command;
}

}  // namespace mlalab::cli
