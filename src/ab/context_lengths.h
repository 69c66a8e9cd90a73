#pragma once
// The context lengths of a sweep point's requests, drawn from the experiment's context spec
// (experiment.h's ContextSpec, as the parser read it).
#include <vector>

#include "ab/experiment.h"

namespace mlalab::ab {

// The context lengths of `count` requests. Request i's length depends only on the spec and i,
// so a sweep point of concurrency 8 serves the first 8 requests of the point of concurrency 16:
// points differ by their concurrency, not by a new draw of lengths. Uniform: integers in
// [min, max], each equally likely. Lognormal: round(median · exp(sigma · z)) for a standard
// normal z, clamped to [min, max]. The same seed gives the same lengths on every platform
// (std::mt19937_64 with our own mappings; the standard distributions are
// implementation-defined).
std::vector<int> sample_context_lengths(const ContextSpec& spec, int count);

}  // namespace mlalab::ab
