#include "dispatch/tuning_table.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <ranges>
#include <nlohmann/json.hpp>
#include <system_error>
#include <utility>

#include "core/atomic_file.h"
#include "core/kernel_config.h"
#include "core/validate.h"
#include "kernels/device.h"
#include "kernels/registry.h"

namespace mlalab::dispatch {
namespace {

constexpr const char* kFormatName = "mlalab-tuning-table";
constexpr int kNoLimit = std::numeric_limits<int>::max();
constexpr auto kReplaceInvalidUtf8 = nlohmann::json::error_handler_t::replace;
// A refused value is quoted in the message up to this many characters: enough for any scalar,
// not a whole array.
constexpr std::size_t kShownChars = 60;

// ---------------------------------------------------------------------------------------------
// Writing. Keys in the order a reader wants them (what the file is, what it was tuned under,
// then the answers), which nlohmann::json's sorted objects would lose.

using OrderedJson = nlohmann::ordered_json;

OrderedJson identity_json(const TableIdentity& identity) {
  OrderedJson candidates = OrderedJson::array();
  for (const CandidateCode& candidate : identity.candidates) {
    candidates.push_back({{"variant", candidate.variant}, {"code_hash", candidate.code_hash}});
  }
  return {{"gpu", identity.gpu},
          {"sm_count", identity.sm_count},
          {"compute_capability", identity.compute_capability},
          {"cuda_driver", identity.cuda_driver},
          {"cuda_runtime", identity.cuda_runtime},
          {"layout", name_of(identity.layout)},
          {"num_heads", identity.num_heads},
          {"page_size", identity.page_size},
          {"candidates", candidates}};
}

OrderedJson entry_json(const TableEntry& entry) {
  OrderedJson ranking = OrderedJson::array();
  for (const CandidateResult& result : entry.ranking) {
    ranking.push_back(
        {{"variant", result.variant},
         {"splits", result.splits},
         {"workers", result.workers},
         {"us", result.us},
         {"us_low", result.us_low},
         {"us_high", result.us_high},
         {"samples", result.samples},
         {"change_pct", result.change_pct ? OrderedJson(*result.change_pct) : OrderedJson()},
         {"change_low_pct", result.change_low_pct},
         {"change_high_pct", result.change_high_pct},
         {"outcome", result.outcome}});
  }
  return {{"batch", entry.batch},
          {"context", entry.context},
          {"variant", entry.variant},
          {"splits", entry.splits},
          {"workers", entry.workers},
          {"rounds", entry.rounds},
          {"seconds", entry.seconds},
          {"decision", entry.decision},
          {"ranking", ranking}};
}

OrderedJson ordered_table_json(const TuningTable& table) {
  OrderedJson pruned = OrderedJson::array();
  for (const PrunedVariant& variant : table.pruned) {
    pruned.push_back({{"variant", variant.variant}, {"reason", variant.reason}});
  }
  OrderedJson entries = OrderedJson::array();
  for (const TableEntry& entry : table.entries) entries.push_back(entry_json(entry));
  return {{"format", kFormatName},
          {"version", kTableFormatVersion},
          {"identity", identity_json(table.identity)},
          {"commit", table.commit},
          {"created_utc", table.created_utc},
          {"batch_buckets", table.batch_buckets},
          {"context_buckets", table.context_buckets},
          {"lengths", lengths_text(table.lengths)},
          {"pruned", pruned},
          {"entries", entries}};
}

// ---------------------------------------------------------------------------------------------
// Reading: a JSON value with its path, whose reads name that path and what was expected.

class Field {
 public:
  // `json` null: the member is missing.
  Field(const nlohmann::json* json, std::string path) : json_(json), path_(std::move(path)) {}

  Field operator[](std::string_view key) const {
    if (json_ == nullptr || !json_->is_object()) reject("an object");
    const auto found = json_->find(key);
    return {found == json_->end() ? nullptr : &*found,
            path_.empty() ? std::string(key) : fmt::format("{}.{}", path_, key)};
  }

  std::vector<Field> items() const {
    if (json_ == nullptr || !json_->is_array()) reject("an array");
    std::vector<Field> items;
    for (std::size_t i = 0; i < json_->size(); ++i) {
      items.emplace_back(&(*json_)[i], fmt::format("{}[{}]", path_, i));
    }
    return items;
  }

  std::vector<Field> nonempty_items() const {
    if (json_ == nullptr || !json_->is_array() || json_->empty()) reject("a non-empty array");
    return items();
  }

  // An integer that `accept` takes, described as `expected`.
  template <typename Accept>
  int integer(std::string_view expected, Accept accept) const {
    if (json_ == nullptr || !json_->is_number_integer()) reject(expected);
    // Past int64's range an unsigned value wraps negative, which no range here accepts.
    const auto value = json_->get<std::int64_t>();
    if (value < std::numeric_limits<int>::min() || value > std::numeric_limits<int>::max() ||
        !accept(static_cast<int>(value))) {
      reject(expected);
    }
    return static_cast<int>(value);
  }

  int integer(int low, int high = kNoLimit) const {
    const std::string expected = high == kNoLimit
                                     ? fmt::format("an integer ≥ {}", low)
                                     : fmt::format("an integer in [{}, {}]", low, high);
    return integer(expected, [&](int value) { return value >= low && value <= high; });
  }

  // Finite: a literal such as 1e999 parses as infinity, which JSON cannot write back.
  double number() const {
    if (json_ == nullptr || !json_->is_number() || !std::isfinite(json_->get<double>())) {
      reject("a number");
    }
    return json_->get<double>();
  }

  std::optional<double> number_or_null() const {
    if (json_ != nullptr && json_->is_null()) return std::nullopt;
    if (json_ == nullptr || !json_->is_number() || !std::isfinite(json_->get<double>())) {
      reject("a number or null");
    }
    return json_->get<double>();
  }

  std::string text() const {
    if (json_ == nullptr || !json_->is_string()) reject("a string");
    return json_->get<std::string>();
  }

  [[noreturn]] void reject(std::string_view expected) const {
    if (json_ == nullptr) fail(fmt::format("missing (expected {})", expected));
    std::string shown = json_->dump(-1, ' ', false, kReplaceInvalidUtf8);
    if (shown.size() > kShownChars) shown = shown.substr(0, kShownChars) + "...";
    fail(fmt::format("expected {}, got {}", expected, shown));
  }

  [[noreturn]] void fail(std::string_view what) const {
    throw TableError(fmt::format("{}: {}", path_, what));
  }

 private:
  const nlohmann::json* json_;
  std::string path_;
};

// Every bucket ≥ 1 and at most `max`, ascending, each once.
std::vector<int> buckets_from(const Field& field, int max) {
  std::vector<int> buckets;
  for (const Field& item : field.nonempty_items()) {
    const int value = item.integer(1, max);
    if (!buckets.empty() && value <= buckets.back()) {
      item.reject(fmt::format("an integer > {}, the bucket before it (buckets ascend, each once)",
                              buckets.back()));
    }
    buckets.push_back(value);
  }
  return buckets;
}

// A config's splits and workers (TableEntry, CandidateResult): a balanced launch has one
// split. Version 1 had no workers.
struct SplitFields {
  int splits = 1;
  int workers = 0;
};
SplitFields split_fields_from(const Field& field, int version) {
  SplitFields split{.splits = field["splits"].integer(1, kMaxSplits)};
  if (version < 2) return split;
  const Field workers = field["workers"];
  split.workers = workers.integer(0, kMaxBalancedWorkers);
  if (split.workers > 0 && split.splits != 1) {
    workers.reject(fmt::format("0 (a balanced launch has 1 split; splits is {})", split.splits));
  }
  return split;
}

TableIdentity identity_from(const Field& field) {
  TableIdentity identity;
  identity.gpu = field["gpu"].text();
  identity.sm_count = field["sm_count"].integer(0);
  identity.compute_capability = field["compute_capability"].integer(0);
  identity.cuda_driver = field["cuda_driver"].text();
  identity.cuda_runtime = field["cuda_runtime"].text();
  const Field layout = field["layout"];
  const auto parsed = parse_layout(layout.text());
  if (!parsed) layout.reject(R"("v3" or "v4")");
  identity.layout = *parsed;
  identity.num_heads = field["num_heads"].integer(1, kMaxHeads);
  const auto page_size_fits = [](int value) {
    return value >= 1 && value <= kMaxPageSize && std::has_single_bit(static_cast<unsigned>(value));
  };
  identity.page_size = field["page_size"].integer(
      fmt::format("a power of two in [1, {}]", kMaxPageSize), page_size_fits);
  for (const Field& candidate : field["candidates"].items()) {
    const Field variant = candidate["variant"];
    const std::string name = variant.text();
    if (!parse_variant_name(name)) variant.reject("a variant name such as h16_t16_w4_s2");
    identity.candidates.push_back({.variant = name, .code_hash = candidate["code_hash"].text()});
  }
  return identity;
}

// A variant the table names must be one of its candidates, whose code identity_mismatch
// checks: any other could be stale code used silently.
std::string candidate_from(const Field& field, const TableIdentity& identity) {
  const std::string name = field.text();
  const auto& candidates = identity.candidates;
  if (std::ranges::find(candidates, name, &CandidateCode::variant) == candidates.end()) {
    std::vector<std::string> names;
    for (const CandidateCode& candidate : candidates) names.push_back(candidate.variant);
    field.reject(fmt::format("one of identity.candidates ({})", fmt::join(names, ", ")));
  }
  return name;
}

CandidateResult result_from(const Field& field, const TableIdentity& identity, int version) {
  CandidateResult result;
  result.variant = candidate_from(field["variant"], identity);
  const SplitFields split = split_fields_from(field, version);
  result.splits = split.splits;
  result.workers = split.workers;
  const Field us = field["us"];
  result.us = us.number();
  if (result.us <= 0) us.reject("a number > 0");
  const Field us_low = field["us_low"];
  result.us_low = us_low.number();
  if (result.us_low > result.us) us_low.reject(fmt::format("a number ≤ us ({})", result.us));
  const Field us_high = field["us_high"];
  result.us_high = us_high.number();
  if (result.us_high < result.us) us_high.reject(fmt::format("a number ≥ us ({})", result.us));
  result.samples = field["samples"].integer(1);
  result.change_pct = field["change_pct"].number_or_null();
  const Field change_low = field["change_low_pct"];
  result.change_low_pct = change_low.number();
  const Field change_high = field["change_high_pct"];
  result.change_high_pct = change_high.number();
  if (result.change_pct && result.change_low_pct > *result.change_pct) {
    change_low.reject(fmt::format("a number ≤ change_pct ({})", *result.change_pct));
  }
  if (result.change_pct && result.change_high_pct < *result.change_pct) {
    change_high.reject(fmt::format("a number ≥ change_pct ({})", *result.change_pct));
  }
  result.outcome = field["outcome"].text();
  return result;
}

// The first of an entry's ranking is its winner: the entry's own config, not compared with
// itself.
void check_winner(const Field& field, const TableEntry& entry) {
  const CandidateResult& winner = entry.winner();
  if (winner.variant != entry.variant) {
    field["variant"].reject(
        fmt::format(R"("{}", the entry's variant (the winner is ranked first))", entry.variant));
  }
  if (winner.splits != entry.splits) {
    field["splits"].reject(
        fmt::format("{}, the entry's splits (the winner is ranked first)", entry.splits));
  }
  if (winner.workers != entry.workers) {
    field["workers"].reject(
        fmt::format("{}, the entry's workers (the winner is ranked first)", entry.workers));
  }
  if (winner.change_pct) {
    field["change_pct"].reject("null (the winner is not compared with itself)");
  }
}

// Reads entries in the order of the file, so that the first bad one is named; `table` holds
// the identity, the buckets and the entries read before this one.
TableEntry entry_from(const Field& field, const TuningTable& table, int version) {
  TableEntry entry;
  const Field batch = field["batch"];
  entry.batch = batch.integer(1);
  if (!std::ranges::binary_search(table.batch_buckets, entry.batch)) {
    batch.reject(fmt::format("one of batch_buckets ({})", fmt::join(table.batch_buckets, ", ")));
  }
  const Field context = field["context"];
  entry.context = context.integer(1);
  if (!std::ranges::binary_search(table.context_buckets, entry.context)) {
    context.reject(
        fmt::format("one of context_buckets ({})", fmt::join(table.context_buckets, ", ")));
  }
  if (const TableEntry* earlier = table.find_bucket(entry.batch, entry.context)) {
    field.fail(fmt::format("a second entry for batch {}, context {} (entries[{}] is the first)",
                           entry.batch, entry.context, earlier - table.entries.data()));
  }
  entry.variant = candidate_from(field["variant"], table.identity);
  const SplitFields split = split_fields_from(field, version);
  entry.splits = split.splits;
  entry.workers = split.workers;
  entry.rounds = field["rounds"].integer(0);
  const Field seconds = field["seconds"];
  entry.seconds = seconds.number();
  if (entry.seconds < 0) seconds.reject("a number ≥ 0");
  entry.decision = field["decision"].text();
  const std::vector<Field> ranking = field["ranking"].nonempty_items();
  entry.ranking.push_back(result_from(ranking.front(), table.identity, version));
  check_winner(ranking.front(), entry);
  for (const Field& result : ranking | std::views::drop(1)) {
    entry.ranking.push_back(result_from(result, table.identity, version));
  }
  return entry;
}

// ---------------------------------------------------------------------------------------------
// Identity in words

std::string gpu_words(const std::string& gpu) {
  return gpu.empty() ? "a machine without a GPU" : fmt::format("'{}'", gpu);
}

std::string architecture_words(int compute_capability) {
  return compute_capability == 0 ? "no GPU" : fmt::format("sm_{}", compute_capability);
}

std::string cuda_words(const std::string& version) {
  return version.empty() ? "no known CUDA version" : fmt::format("CUDA {}", version);
}

enum class CodeHere { kSame, kChanged, kNotCompiled };

// A tuned candidate's code here. `here` lists the candidates by name; one it lacks or has no
// hash for (identity_here's mark of a variant not compiled) is not compiled. The table's hash
// may be in either form (kernels::VariantCodeHashes).
CodeHere code_here(const CandidateCode& tuned, const TableIdentity& here) {
  const auto found = std::ranges::find(here.candidates, tuned.variant, &CandidateCode::variant);
  if (found == here.candidates.end() || found->code_hash.empty()) return CodeHere::kNotCompiled;
  const bool same = tuned.code_hash == found->code_hash ||
                    (!found->code_hash_with_names.empty() &&
                     tuned.code_hash == found->code_hash_with_names);
  return same ? CodeHere::kSame : CodeHere::kChanged;
}

// The table's candidates' names, for identity_here.
std::vector<std::string> candidate_names(const TableIdentity& table) {
  std::vector<std::string> names;
  for (const CandidateCode& candidate : table.candidates) names.push_back(candidate.variant);
  return names;
}

// What the table's candidates lack here, or nullopt: the first, in the table's order.
std::optional<std::string> candidate_mismatch(const TableIdentity& table,
                                              const TableIdentity& here) {
  for (const CandidateCode& tuned : table.candidates) {
    switch (code_here(tuned, here)) {
      case CodeHere::kSame: break;
      case CodeHere::kNotCompiled:
        return fmt::format("candidates: {} is not compiled in this build", tuned.variant);
      case CodeHere::kChanged:
        return fmt::format(
            "candidates: {}'s compiled code differs from the table's (a rebuild with changed "
            "kernel code); re-tune",
            tuned.variant);
    }
  }
  return std::nullopt;
}

}  // namespace

SplitPolicy tuned_split(int splits, int workers) {
  if (workers > 0) return {.kind = SplitPolicy::Kind::kBalanced, .value = workers};
  return {.kind = SplitPolicy::Kind::kFixed, .value = splits};
}

std::string lengths_text(const TunedLengths& lengths) {
  return lengths.equal() ? "equal" : fmt::format("uniform:{}", lengths.shortest_fraction);
}

std::optional<TunedLengths> parse_lengths(std::string_view text) {
  if (text == "equal") return TunedLengths{};
  if (text == "uniform") return TunedLengths{.shortest_fraction = kDefaultShortestFraction};
  constexpr std::string_view kUniform = "uniform:";
  if (!text.starts_with(kUniform)) return std::nullopt;
  // from_chars, not strtod: a table is read inside an engine's process, whose locale may
  // write decimals with a comma; and it takes no sign, space or hex form.
  const std::string_view number = text.substr(kUniform.size());
  double fraction = 0.0;
  const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(),
                                            fraction);
  if (number.empty() || error != std::errc{} || end != number.data() + number.size() ||
      !(fraction > 0.0 && fraction <= 1.0)) {
    return std::nullopt;
  }
  return TunedLengths{.shortest_fraction = fraction};
}

std::string config_text(std::string_view variant, int splits, int workers) {
  if (workers > 0) return fmt::format("{}/balanced:{}", variant, workers);
  return fmt::format("{}/{}", variant, splits);
}

std::vector<int> default_batch_buckets() { return {1, 2, 4, 8, 16, 32, 64, 128}; }

std::vector<int> default_context_buckets() { return {1024, 4096, 16384}; }

std::vector<int> merge_buckets(std::span<const int> defaults, std::span<const int> listed) {
  std::vector<int> merged(defaults.begin(), defaults.end());
  merged.insert(merged.end(), listed.begin(), listed.end());
  std::ranges::sort(merged);
  const auto duplicates = std::ranges::unique(merged);
  merged.erase(duplicates.begin(), duplicates.end());
  return merged;
}

int bucket_of(std::span<const int> buckets, int value) {
  const auto found = std::ranges::lower_bound(buckets, value);
  return found == buckets.end() ? buckets.back() : *found;
}

TableIdentity identity_here(Layout layout, int num_heads, int page_size,
                            std::span<const std::string> candidate_variants) {
  const kernels::CurrentDevice& device = kernels::current_device();
  // Without a device the runtime reports neither version, and CurrentDevice's SM count of 1 is
  // a placeholder for arithmetic, not a fact to record.
  const auto version = [](int encoded) {
    return encoded > 0 ? kernels::cuda_version_text(encoded) : std::string();
  };
  TableIdentity identity{.gpu = device.present ? device.name : std::string(),
                         .sm_count = device.present ? device.sm_count : 0,
                         .compute_capability = device.compute_capability,
                         .cuda_driver = version(device.cuda_driver_version),
                         .cuda_runtime = version(device.cuda_runtime_version),
                         .layout = layout,
                         .num_heads = num_heads,
                         .page_size = page_size,
                         .candidates = {}};
  for (const std::string& name : candidate_variants) {
    const kernels::Variant* variant = kernels::find_variant(name);
    identity.candidates.push_back(
        {.variant = name,
         .code_hash = variant != nullptr ? variant->code_hash : std::string(),
         .code_hash_with_names = variant != nullptr ? variant->code_hash_with_names : ""});
  }
  return identity;
}

std::optional<std::string> identity_mismatch(const TableIdentity& table,
                                             const TableIdentity& here) {
  if (table.gpu != here.gpu) {
    return fmt::format("gpu: the table was tuned on {}, this is {}", gpu_words(table.gpu),
                       gpu_words(here.gpu));
  }
  if (table.sm_count != here.sm_count) {
    return fmt::format("sm_count: the table was tuned on a GPU with {} SMs, this one has {}",
                       table.sm_count, here.sm_count);
  }
  if (table.compute_capability != here.compute_capability) {
    return fmt::format("compute_capability: the table was tuned on {}, this GPU is {}",
                       architecture_words(table.compute_capability),
                       architecture_words(here.compute_capability));
  }
  if (table.cuda_driver != here.cuda_driver) {
    return fmt::format(
        "cuda_driver: the table was tuned with a driver for {}, this one is for {}",
        cuda_words(table.cuda_driver), cuda_words(here.cuda_driver));
  }
  if (table.cuda_runtime != here.cuda_runtime) {
    return fmt::format(
        "cuda_runtime: the table was tuned with the runtime of {}, this build links {}",
        cuda_words(table.cuda_runtime), cuda_words(here.cuda_runtime));
  }
  if (table.layout != here.layout) {
    return fmt::format("layout: the table was tuned for {}, this problem is {}",
                       name_of(table.layout), name_of(here.layout));
  }
  if (table.num_heads != here.num_heads) {
    return fmt::format("num_heads: the table was tuned for {} heads, this problem has {}",
                       table.num_heads, here.num_heads);
  }
  if (table.page_size != here.page_size) {
    return fmt::format(
        "page_size: the table was tuned for pages of {} tokens, this problem's hold {}",
        table.page_size, here.page_size);
  }
  return candidate_mismatch(table, here);
}

CandidateCodeCheck check_candidate_code(const TableIdentity& table, const TableIdentity& here) {
  CandidateCodeCheck check;
  for (const CandidateCode& tuned : table.candidates) {
    switch (code_here(tuned, here)) {
      case CodeHere::kSame: break;
      case CodeHere::kChanged: check.changed.push_back(tuned.variant); break;
      case CodeHere::kNotCompiled: check.not_compiled.push_back(tuned.variant); break;
    }
  }
  return check;
}

CandidateCodeCheck check_candidate_code_here(const TableIdentity& table) {
  return check_candidate_code(table, identity_here(table.layout, table.num_heads,
                                                   table.page_size, candidate_names(table)));
}

std::optional<std::string> mismatch_here(const TuningTable& table, Layout layout, int num_heads,
                                         int page_size) {
  return identity_mismatch(table.identity, identity_here(layout, num_heads, page_size,
                                                         candidate_names(table.identity)));
}

const TableEntry* TuningTable::find(int batch, int max_context) const {
  if (batch_buckets.empty() || context_buckets.empty()) return nullptr;
  return find_bucket(bucket_of(batch_buckets, batch), bucket_of(context_buckets, max_context));
}

const TableEntry* TuningTable::find_bucket(int batch_bucket, int context_bucket) const {
  const auto found = std::ranges::find_if(entries, [&](const TableEntry& entry) {
    return entry.batch == batch_bucket && entry.context == context_bucket;
  });
  return found == entries.end() ? nullptr : &*found;
}

TableEntry* TuningTable::find_bucket(int batch_bucket, int context_bucket) {
  return const_cast<TableEntry*>(std::as_const(*this).find_bucket(batch_bucket, context_bucket));
}

nlohmann::json table_to_json(const TuningTable& table) {
  return nlohmann::json(ordered_table_json(table));
}

TuningTable table_from_json(const nlohmann::json& json) {
  if (!json.is_object() || !json.contains("format") || json["format"] != kFormatName) {
    throw TableError("format: not an mlalab tuning table");
  }
  const Field root(&json, "");
  const Field version_field = root["version"];
  const int version = version_field.integer(1);
  if (version > kTableFormatVersion) {
    version_field.fail(
        fmt::format("{} is newer than this build reads ({})", version, kTableFormatVersion));
  }
  TuningTable table;
  table.identity = identity_from(root["identity"]);
  table.commit = root["commit"].text();
  table.created_utc = root["created_utc"].text();
  table.batch_buckets = buckets_from(root["batch_buckets"], kMaxBatch);
  table.context_buckets = buckets_from(root["context_buckets"], kNoLimit);
  if (version >= 3) {
    const Field lengths = root["lengths"];
    const auto parsed = parse_lengths(lengths.text());
    if (!parsed) lengths.reject(kLengthsForms);
    table.lengths = *parsed;
  }
  for (const Field& pruned : root["pruned"].items()) {
    table.pruned.push_back(
        {.variant = pruned["variant"].text(), .reason = pruned["reason"].text()});
  }
  for (const Field& entry : root["entries"].items()) {
    table.entries.push_back(entry_from(entry, table, version));
  }
  return table;
}

void write_table(const TuningTable& table, const std::string& path) {
  const OrderedJson json = ordered_table_json(table);
  // A table that read_table would refuse is refused here, before a tuning run's result lands
  // in a file whose fault only the server that reads it would find.
  try {
    table_from_json(nlohmann::json(json));
  } catch (const TableError& error) {
    throw TableError(fmt::format("{} not written: {}", path, error.what()));
  }
  // Whole or not at all: a server reading the table sees the old one or the new one.
  try {
    write_file_atomically(path, [&](std::ostream& out) {
      out << json.dump(2, ' ', false, kReplaceInvalidUtf8) << '\n';
    });
  } catch (const std::runtime_error& error) {
    throw TableError(error.what());
  }
}

TuningTable read_table(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw TableError(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(in);
  } catch (const nlohmann::json::exception& error) {
    throw TableError(fmt::format("{} is not JSON: {}", path, error.what()));
  }
  try {
    return table_from_json(json);
  } catch (const TableError& error) {
    throw TableError(fmt::format("{}: {}", path, error.what()));
  }
}

}  // namespace mlalab::dispatch
