#pragma once
// The CPUs this process may run on (taskset, a container's cpuset): what the CPU backend's
// threads share, read by the A/B lab's environment record and by bench's CPU header.
#include <vector>

namespace mlalab {

// In ascending order; empty when the affinity mask cannot be read.
std::vector<int> usable_cpu_list();

}  // namespace mlalab
