#include "kernels/cpu/cpu_backend.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <thread>
#include <vector>

#include "core/layout.h"

namespace mlalab::kernels {
namespace {

// Tokens converted to fp32 and scored together: 32 rows of 576 floats are 72 KiB, small enough
// to stay in L2 while every head reads them.
constexpr int kTokenTile = 32;

// A sequence is cut into pieces for different threads only when each piece keeps at least this
// many tokens, so that the per-piece overhead (converting q for every head, merging the partial
// results) stays small next to the scoring.
constexpr int kMinTokensPerPiece = 256;

// Pieces aimed at per thread, so that pieces of uneven length still balance across threads.
constexpr int kPiecesPerThread = 4;

// Independent partial sums in the dot product. A single running sum cannot be vectorised
// without reassociation (which the compiler may not do without -ffast-math); 16 lanes can.
constexpr int kDotLanes = 16;
static_assert(dims_of(Layout::kV3).d_qk % kDotLanes == 0 &&
              dims_of(Layout::kV4).d_qk % kDotLanes == 0);

constexpr float kMinusInfinity = -std::numeric_limits<float>::infinity();

float dot(const float* a, const float* b, int n) {
  float lanes[kDotLanes] = {};
  for (int i = 0; i < n; i += kDotLanes) {
    for (int lane = 0; lane < kDotLanes; ++lane) lanes[lane] += a[i + lane] * b[i + lane];
  }
  float sum = 0.0f;
  for (const float lane : lanes) sum += lane;
  return sum;
}

// Runs every item in [0, count) on `workers` threads. Each thread first calls make_task() to
// get its own task (which owns that thread's scratch buffers), then takes items one at a time.
template <typename MakeTask>
void parallel_for(std::int64_t count, int workers, const MakeTask& make_task) {
  if (count <= 0) return;
  std::atomic<std::int64_t> next_item{0};
  const auto work = [&] {
    auto task = make_task();
    for (std::int64_t item = next_item++; item < count; item = next_item++) task(item);
  };
  std::vector<std::jthread> helpers;
  const std::int64_t threads = std::min<std::int64_t>(workers, count);
  for (std::int64_t worker = 1; worker < threads; ++worker) helpers.emplace_back(work);
  work();
}

// A contiguous range of one sequence's tokens, processed by one thread for every head.
struct Piece {
  static constexpr std::int64_t kDirect = -1;

  int batch_index = 0;
  int begin = 0;
  int end = 0;
  // Where this piece's partial results go when its sequence has several pieces; kDirect when
  // the piece is the whole sequence and writes out and lse itself.
  std::int64_t partial_slot = kDirect;
};

// A batch entry cut into several pieces, whose partial results are merged at the end.
struct SplitSequence {
  int batch_index = 0;
  std::int64_t first_slot = 0;  // its pieces' partial slots are consecutive from here
  int pieces = 0;
};

struct WorkPlan {
  std::vector<Piece> pieces;
  std::vector<SplitSequence> split_sequences;
  std::int64_t partial_slots = 0;
};

WorkPlan plan_pieces(const DecodeParams& p, int workers) {
  std::int64_t total_tokens = 0;
  for (int b = 0; b < p.batch; ++b) total_tokens += p.seq_lens[b];
  const std::int64_t target_pieces = static_cast<std::int64_t>(workers) * kPiecesPerThread;
  const std::int64_t tokens_per_piece =
      workers == 1 ? std::numeric_limits<int>::max()
                   : std::max<std::int64_t>(kMinTokensPerPiece,
                                            (total_tokens + target_pieces - 1) / target_pieces);
  WorkPlan plan;
  for (int b = 0; b < p.batch; ++b) {
    const std::int64_t seq_len = p.seq_lens[b];
    const auto piece_count = static_cast<int>(
        std::max<std::int64_t>(1, (seq_len + tokens_per_piece - 1) / tokens_per_piece));
    if (piece_count > 1) {
      plan.split_sequences.push_back(
          {.batch_index = b, .first_slot = plan.partial_slots, .pieces = piece_count});
    }
    for (int piece = 0; piece < piece_count; ++piece) {
      plan.pieces.push_back(
          Piece{.batch_index = b,
                .begin = static_cast<int>(seq_len * piece / piece_count),
                .end = static_cast<int>(seq_len * (piece + 1) / piece_count),
                .partial_slot = piece_count > 1 ? plan.partial_slots++ : Piece::kDirect});
    }
  }
  return plan;
}

// Online-softmax states over the tokens seen so far, one row per head (of one piece, or of every
// partial slot): the running max score, the sum of exp(score - max), and the V rows weighted by
// exp(score - max).
struct HeadStates {
  std::vector<float> max_score;
  std::vector<float> sum;
  std::vector<float> acc;  // [num_heads, d_v]

  HeadStates(std::int64_t rows, int d_v)
      : max_score(rows, kMinusInfinity), sum(rows, 0.0f), acc(rows * d_v, 0.0f) {}
};

// Writes out[b,h] and lse[b,h] from one head's final state.
void finish_head(const DecodeParams& p, int b, int h, float max_score, float sum,
                 const float* acc) {
  bf16* out_row = p.out + b * p.out_batch_stride + h * p.out_head_stride;
  float& lse = p.lse[static_cast<std::int64_t>(b) * p.num_heads + h];
  if (p.seq_lens[b] == 0) {
    std::fill(out_row, out_row + p.d_v, to_bf16(0.0f));
    lse = kMinusInfinity;
    return;
  }
  const float sink_weight =
      p.sink_logits != nullptr ? std::exp(p.sink_logits[h] - max_score) : 0.0f;
  const float inverse_denominator = 1.0f / (sum + sink_weight);
  for (int d = 0; d < p.d_v; ++d) out_row[d] = to_bf16(acc[d] * inverse_denominator);
  lse = max_score + std::log(sum);
}

// Processes the pieces of the plan; one per thread, owning that thread's scratch.
class PieceWorker {
 public:
  PieceWorker(const DecodeParams& p, HeadStates& partials)
      : p_(p),
        partials_(partials),
        q_(static_cast<std::size_t>(p.num_heads) * p.d_qk),
        rows_(static_cast<std::size_t>(kTokenTile) * p.d_qk),
        weights_(kTokenTile),
        states_(p.num_heads, p.d_v) {}

  void run(const Piece& piece) {
    reset_states();
    load_q(piece.batch_index);
    for (int begin = piece.begin; begin < piece.end; begin += kTokenTile) {
      const int tokens = std::min(kTokenTile, piece.end - begin);
      load_rows(piece.batch_index, begin, tokens);
      for (int h = 0; h < p_.num_heads; ++h) add_tile(h, tokens);
    }
    if (piece.partial_slot == Piece::kDirect) {
      for (int h = 0; h < p_.num_heads; ++h) {
        finish_head(p_, piece.batch_index, h, states_.max_score[h], states_.sum[h],
                    &states_.acc[static_cast<std::size_t>(h) * p_.d_v]);
      }
    } else {
      save_partial(piece.partial_slot);
    }
  }

 private:
  void reset_states() {
    std::fill(states_.max_score.begin(), states_.max_score.end(), kMinusInfinity);
    std::fill(states_.sum.begin(), states_.sum.end(), 0.0f);
    std::fill(states_.acc.begin(), states_.acc.end(), 0.0f);
  }

  void load_q(int b) {
    for (int h = 0; h < p_.num_heads; ++h) {
      const bf16* q = p_.q + b * p_.q_batch_stride + h * p_.q_head_stride;
      float* q_row = &q_[static_cast<std::size_t>(h) * p_.d_qk];
      for (int d = 0; d < p_.d_qk; ++d) q_row[d] = to_float(q[d]);
    }
  }

  // Converts the cache rows of tokens [begin, begin + tokens) of sequence b to fp32, once for
  // all heads.
  void load_rows(int b, int begin, int tokens) {
    for (int t = 0; t < tokens; ++t) {
      const int token = begin + t;
      const std::int32_t page = p_.page_table[b * p_.page_table_stride + token / p_.page_size];
      const bf16* row =
          p_.kv_cache + page * p_.kv_page_stride + (token % p_.page_size) * p_.kv_row_stride;
      float* row_f32 = &rows_[static_cast<std::size_t>(t) * p_.d_qk];
      for (int d = 0; d < p_.d_qk; ++d) row_f32[d] = to_float(row[d]);
    }
  }

  // Folds the loaded tile into head h's online-softmax state.
  void add_tile(int h, int tokens) {
    const float* q_row = &q_[static_cast<std::size_t>(h) * p_.d_qk];
    float tile_max = kMinusInfinity;
    for (int t = 0; t < tokens; ++t) {
      weights_[t] =
          p_.softmax_scale * dot(q_row, &rows_[static_cast<std::size_t>(t) * p_.d_qk], p_.d_qk);
      tile_max = std::max(tile_max, weights_[t]);
    }
    float& max_score = states_.max_score[h];
    const float new_max = std::max(max_score, tile_max);
    // The first tile has no earlier state to rescale (and exp(-inf - -inf) would be NaN).
    const float rescale = max_score == kMinusInfinity ? 0.0f : std::exp(max_score - new_max);
    float tile_sum = 0.0f;
    for (int t = 0; t < tokens; ++t) {
      weights_[t] = std::exp(weights_[t] - new_max);
      tile_sum += weights_[t];
    }
    states_.sum[h] = states_.sum[h] * rescale + tile_sum;
    max_score = new_max;

    float* acc = &states_.acc[static_cast<std::size_t>(h) * p_.d_v];
    if (rescale != 1.0f) {
      for (int d = 0; d < p_.d_v; ++d) acc[d] *= rescale;
    }
    for (int t = 0; t < tokens; ++t) {
      const float weight = weights_[t];
      const float* v = &rows_[static_cast<std::size_t>(t) * p_.d_qk];
      for (int d = 0; d < p_.d_v; ++d) acc[d] += weight * v[d];
    }
  }

  void save_partial(std::int64_t slot) {
    const std::int64_t first_row = slot * p_.num_heads;
    std::copy(states_.max_score.begin(), states_.max_score.end(),
              partials_.max_score.begin() + first_row);
    std::copy(states_.sum.begin(), states_.sum.end(), partials_.sum.begin() + first_row);
    std::copy(states_.acc.begin(), states_.acc.end(), partials_.acc.begin() + first_row * p_.d_v);
  }

  const DecodeParams& p_;
  HeadStates& partials_;
  std::vector<float> q_;        // [num_heads, d_qk]
  std::vector<float> rows_;     // [kTokenTile, d_qk]
  std::vector<float> weights_;  // [kTokenTile]: scores, then exp(score - max)
  HeadStates states_;
};

// Merges the partial states of one split (batch entry, head) through their maxima, as the
// split-KV combine does on the GPU, and writes the result.
void merge_head(const DecodeParams& p, const HeadStates& partials, const SplitSequence& sequence,
                int h, std::vector<float>& acc) {
  const auto partial_row = [&](int piece) {
    return (sequence.first_slot + piece) * p.num_heads + h;
  };
  float max_score = kMinusInfinity;
  for (int piece = 0; piece < sequence.pieces; ++piece) {
    max_score = std::max(max_score, partials.max_score[partial_row(piece)]);
  }
  float sum = 0.0f;
  std::fill(acc.begin(), acc.end(), 0.0f);
  for (int piece = 0; piece < sequence.pieces; ++piece) {
    const std::int64_t row = partial_row(piece);
    const float scale = std::exp(partials.max_score[row] - max_score);
    sum += partials.sum[row] * scale;
    const float* partial_acc = &partials.acc[row * p.d_v];
    for (int d = 0; d < p.d_v; ++d) acc[d] += partial_acc[d] * scale;
  }
  finish_head(p, sequence.batch_index, h, max_score, sum, acc.data());
}

}  // namespace

std::optional<InputError> run_cpu_backend(const DecodeParams& host_params, int num_threads) {
  const DecodeParams& p = host_params;
  if (num_threads < 0) {
    return InputError{.field = "num_threads",
                      .value = std::to_string(num_threads),
                      .allowed = "[0, ...] (0: every hardware thread)"};
  }
  if (auto error = validate_tables(p, p.page_table, p.seq_lens)) return error;  // shapes too

  const int workers = num_threads > 0
                          ? num_threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const WorkPlan plan = plan_pieces(p, workers);
  HeadStates partials(plan.partial_slots * p.num_heads, p.d_v);

  parallel_for(static_cast<std::int64_t>(plan.pieces.size()), workers, [&] {
    return [&, worker = PieceWorker(p, partials)](std::int64_t item) mutable {
      worker.run(plan.pieces[item]);
    };
  });

  const std::int64_t merges = static_cast<std::int64_t>(plan.split_sequences.size()) * p.num_heads;
  parallel_for(merges, workers, [&] {
    return [&, acc = std::vector<float>(p.d_v)](std::int64_t item) mutable {
      const SplitSequence& sequence = plan.split_sequences[item / p.num_heads];
      merge_head(p, partials, sequence, static_cast<int>(item % p.num_heads), acc);
    };
  });
  return std::nullopt;
}

}  // namespace mlalab::kernels
