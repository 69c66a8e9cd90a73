#pragma once
// The tuning table: for one (layout, heads, page size) on one GPU and build, the variant and
// split (a count per sequence, or a balanced launch) that `mlalab tune` measured fastest at
// each key (batch bucket, context bucket), with the evidence (its time with interval, the
// runner-up, every raced candidate). A Dispatcher reads it; nothing else decides from it.
//
// Buckets. A table is tuned at a list of batch sizes and a list of context lengths; each is a
// bucket's upper end, and what was measured. A call of batch b whose longest sequence has L
// tokens is served by the entry of the smallest tuned batch ≥ b and the smallest tuned context
// ≥ L, i.e. by the measurement of the nearest problem at least as large; past the largest
// tuned value, by the largest. The config is correct for any batch and length (a split count
// is capped per call so every split has tokens; a balanced launch's workers share whatever
// tokens there are); only its speed was measured elsewhere.
//
// Identity. Everything that can change the winner is recorded: the GPU (name, SMs, compute
// capability), the CUDA driver and runtime, the problem (layout, heads, page size), and the
// candidates with the SHA-256 of their compiled code. A table read under another identity is
// refused, naming the field that differs; it is never used silently.
#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/kernel_config.h"
#include "core/layout.h"

namespace mlalab::dispatch {

// 1, 2, 4, ..., 128: the batch sizes a decode step is padded to in CUDA-graph serving.
std::vector<int> default_batch_buckets();
// 1024, 4096, 16384: short, typical and long contexts (powers of two).
std::vector<int> default_context_buckets();

// The defaults and the sizes a user lists, ascending and distinct.
std::vector<int> merge_buckets(std::span<const int> defaults, std::span<const int> listed);

// The bucket serving `value`: the smallest bucket ≥ value, else the largest. `buckets` is
// ascending and not empty.
int bucket_of(std::span<const int> buckets, int value);

// A tuned config's split as a policy: `splits` per sequence (fixed:N), or, when workers > 0, a
// balanced launch of that many workers per head block sharing the batch's tokens.
SplitPolicy tuned_split(int splits, int workers);
// "wgmma_h64_t64_w8_s2/4" (4 splits per sequence) or "wgmma_h64_t64_w8_s2/balanced:66".
std::string config_text(std::string_view variant, int splits, int workers);

// How the tuner drew a key's sequence lengths. Equal (shortest_fraction 1): every sequence as
// long as the context bucket, where the split launches do best. Mixed: each length uniform in
// [⌈shortest_fraction · context⌉, context] (seeded, as `mlalab ab` draws them), as serving
// batches are; there a balanced launch may win instead (issue 9's batches, uniform in
// 1,024-8,192, are shortest_fraction 0.125 of context 8,192). A Dispatcher serves either table
// alike; a re-tune into a table of other lengths is refused.
struct TunedLengths {
  double shortest_fraction = 1.0;  // in (0, 1]
  bool equal() const { return shortest_fraction == 1.0; }
  bool operator==(const TunedLengths&) const = default;
};
inline constexpr double kDefaultShortestFraction = 0.125;
// "equal", or "uniform:F" with F = shortest_fraction.
std::string lengths_text(const TunedLengths& lengths);
// lengths_text's forms, and "uniform" alone for F = kDefaultShortestFraction; nullopt for any
// other text or an F outside (0, 1].
std::optional<TunedLengths> parse_lengths(std::string_view text);
// What parse_lengths accepts, in words, for the errors of every reader of such text.
inline constexpr std::string_view kLengthsForms =
    "equal, uniform, or uniform:F with F in (0, 1], e.g. uniform:0.125";

struct CandidateCode {
  std::string variant;    // registry name, e.g. h16_t16_w4_s2
  std::string code_hash;  // kernels::Variant::code_hash when tuned
  // This build's kernels::Variant::code_hash_with_names, filled by identity_here only (tables
  // do not write it): a table tuned before code hashes left kernel names out recorded that
  // form, and still matches it.
  std::string code_hash_with_names{};
  bool operator==(const CandidateCode&) const = default;
};

struct TableIdentity {
  std::string gpu;              // e.g. "NVIDIA H200"
  int sm_count = 0;
  int compute_capability = 0;   // 10 · major + minor
  std::string cuda_driver;      // the CUDA version the driver supports, e.g. "13.0"
  std::string cuda_runtime;     // the runtime linked into the build, e.g. "13.0"
  Layout layout = Layout::kV3;
  int num_heads = 0;
  int page_size = 0;
  std::vector<CandidateCode> candidates;  // every compiled variant the tuner considered
  bool operator==(const TableIdentity&) const = default;
};

// This process's identity for a problem: the GPU and CUDA versions from
// kernels::current_device (without a GPU: an empty name and versions, and zeros), and the named
// variants' code hashes from the registry (a name that is not compiled gets an empty hash, so
// that it never matches).
TableIdentity identity_here(Layout layout, int num_heads, int page_size,
                            std::span<const std::string> candidate_variants);

// Why a table tuned under `table` must not be used `here`, naming the first field that
// differs in the order of TableIdentity's fields ("gpu: the table was tuned on 'NVIDIA H100
// 80GB HBM3', this is 'NVIDIA H200'", "candidates: h16_t16_w4_s2's compiled code differs from
// the table's (a rebuild with changed kernel code); re-tune"), or nullopt when they match.
// Only the table's candidates are compared, by name: `here` lists them (identity_here with
// their names), and one it lacks or has no hash for is not compiled in this build.
std::optional<std::string> identity_mismatch(const TableIdentity& table,
                                             const TableIdentity& here);

// The table's candidates whose code this build does not have, by name in the table's order:
// compiled here with other machine code (a rebuild with changed kernel code), or not compiled
// here at all. Either makes identity_mismatch refuse the table; this lists all of them, for
// `mlalab tune --explain` to say whether a table still fits the build without a GPU.
struct CandidateCodeCheck {
  std::vector<std::string> changed;
  std::vector<std::string> not_compiled;
  bool operator==(const CandidateCodeCheck&) const = default;
};
CandidateCodeCheck check_candidate_code(const TableIdentity& table, const TableIdentity& here);
// check_candidate_code against this build (identity_here with the table's own candidates).
CandidateCodeCheck check_candidate_code_here(const TableIdentity& table);

// One raced candidate at one key, as measured. Times are per call, in µs: the 15 % trimmed
// mean of the log times exponentiated, with its Student-t interval. Intervals here are at the
// race's confidence, 1 − tune::RaceSettings::alpha (99 %), the level it drops candidates at.
struct CandidateResult {
  std::string variant;
  int splits = 1;
  int workers = 0;  // > 0: a balanced launch of this many workers per head block (splits 1)
  double us = 0.0;
  double us_low = 0.0;
  double us_high = 0.0;
  int samples = 0;
  // Against the key's winner over their paired rounds, in throughput terms (+ = this one is
  // faster): the trimmed mean of ln(winner time / this time) as a %, with its interval.
  // nullopt for the winner itself.
  std::optional<double> change_pct{};
  double change_low_pct = 0.0;
  double change_high_pct = 0.0;
  // Why it stopped racing, or what it became: "winner", "runner-up", "dropped after round 7:
  // slower than the leader beyond its interval", "kept: the incumbent, not beaten beyond the
  // noise", ...
  std::string outcome;
  bool operator==(const CandidateResult&) const = default;
};

struct TableEntry {
  int batch = 0;    // the bucket: the batch size measured
  int context = 0;  // the bucket: the context length measured (every sequence this long)
  std::string variant;
  int splits = 1;
  int workers = 0;  // as in CandidateResult
  std::vector<CandidateResult> ranking;  // the winner first, then by measured time
  int rounds = 0;                         // rounds raced at this key
  double seconds = 0.0;                   // wall time of this key's race
  std::string decision;  // "new", "kept: ...", "replaced h16_t16_w8_s2/8: ..." (sticky re-tuning)

  const CandidateResult& winner() const { return ranking.front(); }
  const CandidateResult* runner_up() const { return ranking.size() > 1 ? &ranking[1] : nullptr; }
  bool operator==(const TableEntry&) const = default;
};

struct PrunedVariant {
  std::string variant;
  std::string reason;  // feasibility's reason, e.g. "needs 402,176 B of shared memory, ..."
  bool operator==(const PrunedVariant&) const = default;
};

struct TuningTable {
  TableIdentity identity;
  std::string commit;       // of the build that tuned it
  std::string created_utc;  // ISO 8601, of the last tuning run that changed it
  std::vector<int> batch_buckets;    // ascending
  std::vector<int> context_buckets;  // ascending
  TunedLengths lengths;              // how each key's lengths were drawn
  std::vector<PrunedVariant> pruned;
  std::vector<TableEntry> entries;   // one per (batch bucket, context bucket) tuned

  // The entry serving a call (bucket_of on both axes), or null when that key was not tuned.
  const TableEntry* find(int batch, int max_context) const;
  // The entry of exactly this bucket pair, or null.
  const TableEntry* find_bucket(int batch_bucket, int context_bucket) const;
  TableEntry* find_bucket(int batch_bucket, int context_bucket);
  bool operator==(const TuningTable&) const = default;
};

// Why `table` must not be used by this process for the problem (layout, heads, page size):
// identity_mismatch against identity_here with the table's own candidates. What the
// Dispatcher and a tuned A/B arm ask before using a table.
std::optional<std::string> mismatch_here(const TuningTable& table, Layout layout, int num_heads,
                                         int page_size);

// A table file that cannot be read or does not hold a valid table: what and where.
class TableError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// 2 added `workers` (balanced launches as candidates); a version-1 file has none, read as 0.
// 3 added `lengths` (lengths_text); earlier files were tuned on equal lengths.
inline constexpr int kTableFormatVersion = 3;

// The file's form: {"format": "mlalab-tuning-table", "version", "identity", "commit",
// "created_utc", "batch_buckets", "context_buckets", "lengths", "pruned", "entries"}, the
// fields named as in the structs above; a winner's change_pct is null. write_table keeps this
// order of keys, which nlohmann::json (sorting them) does not.
nlohmann::json table_to_json(const TuningTable& table);
// Throws TableError naming the path of the first missing or malformed field, what was expected
// and what it holds ("entries[3].splits: expected an integer in [1, 256], got 0"). Beyond the
// types it checks what the structs promise: buckets ascending and distinct, every entry at a
// pair of buckets and only one there, num_heads and page_size as DecodeParams allows them,
// splits in [1, kMaxSplits], workers in [0, kMaxBalancedWorkers] (splits 1 when > 0),
// us_low ≤ us ≤ us_high with us > 0, the winner ranked first with the entry's variant, splits
// and workers, and every variant named in a ranking one of the candidates (whose code
// identity_mismatch checks).
TuningTable table_from_json(const nlohmann::json& json);

// Writes atomically (a temporary `path` + ".tmp" renamed over `path`), indented for people to
// read. Throws TableError: the table is one table_from_json would refuse (nothing is written),
// or the file cannot be written (the path and the OS's reason).
void write_table(const TuningTable& table, const std::string& path);
// Throws TableError: the file cannot be read ("cannot read <path>: <reason>"), is not JSON
// ("<path> is not JSON: <parser message>"), or not a table ("<path>: <field error>").
TuningTable read_table(const std::string& path);

}  // namespace mlalab::dispatch
