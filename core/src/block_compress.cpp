#include <kcla/block_compress.hpp>
#include <kcla/repair.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <map>
#include <mutex>
#include <thread>

namespace kcla {

std::int64_t default_block_cols(std::int64_t num_rows, const BlockCompressOptions& options) {
  if (options.block_cols > 0) return options.block_cols;
  constexpr std::int64_t kEntriesPerBlock = std::int64_t(1) << 26;
  return std::max<std::int64_t>(64, kEntriesPerBlock / std::max<std::int64_t>(num_rows, 1));
}

bool CsrColumnBlockSource::next_block(std::int64_t max_cols, CsrMatrix<double>& block) {
  if (max_cols <= 0) throw InvalidArgument(name_ + ": block width must be positive");
  if (next_col_ >= a_.num_cols) {
    block = CsrMatrix<double>{};
    return false;
  }
  const auto end = std::min(a_.num_cols, next_col_ + max_cols);
  block = column_slice(a_, next_col_, end);
  next_col_ = end;
  return true;
}

namespace {

std::int64_t csr_bytes(const CsrMatrix<double>& a) {
  return static_cast<std::int64_t>(a.row_offsets.size() * 8 + a.column_indices.size() * 4 +
                                   a.values.size() * 8);
}

std::int64_t grammar_bytes(const Grammar& g) {
  return static_cast<std::int64_t>(g.values.size() * 8 + g.terminal_values.size() * 8 +
                                   g.rule_left.size() * 8 + g.row_offsets.size() * 8 +
                                   g.sequence.size() * 4);
}

// The pool's shared state: the source (read by one thread at a time), the byte budget, and
// finished grammars waiting for their predecessors.
class BlockPipeline {
 public:
  BlockPipeline(ColumnBlockSource& source, const BlockCompressOptions& options,
                const std::function<void(std::int64_t, const BlockExtent&, Grammar&&)>& sink)
      : source_(source),
        options_(options),
        sink_(sink),
        block_cols_(default_block_cols(source.num_rows(), options)),
        start_(std::chrono::steady_clock::now()) {
    progress_.columns_total = source.num_cols();
  }

  void worker() {
    try {
      for (;;) {
        CsrMatrix<double> block;
        std::int64_t id = 0, charge = 0;
        BlockExtent extent;
        {
          std::unique_lock<std::mutex> lock(mutex_);
          // Read only while the budget has room: at least one block always may run.
          changed_.wait(
              lock, [&] { return failed_ || exhausted_ || in_flight_bytes_ == 0 || has_room(); });
          if (failed_ || exhausted_) return;
          if (!source_.next_block(block_cols_, block)) {
            exhausted_ = true;
            changed_.notify_all();
            return;
          }
          if (block.num_rows != source_.num_rows())
            throw FormatError(source_.name(), "block " + std::to_string(next_id_) + " has " +
                                                  std::to_string(block.num_rows) +
                                                  " rows, the panel " +
                                                  std::to_string(source_.num_rows()));
          id = next_id_++;
          extent = {0, block.num_rows, next_col_, next_col_ + block.num_cols};
          next_col_ += block.num_cols;
          charge = csr_bytes(block) + kRepairBytesPerNonzero * block.nnz();
          if (options_.memory_limit_bytes > 0 && charge > options_.memory_limit_bytes)
            throw InvalidArgument(
                source_.name() + ": block " + std::to_string(id) + " (columns " +
                std::to_string(extent.col_begin) + ".." + std::to_string(extent.col_end) + ", " +
                std::to_string(block.nnz()) + " nonzeros) needs about " +
                std::to_string(charge >> 20) + " MiB to compress, more than the memory limit of " +
                std::to_string(options_.memory_limit_bytes >> 20) +
                " MiB; use narrower blocks (--block-cols)");
          largest_charge_ = std::max(largest_charge_, charge);
          // A block larger than the ones before may not fit beside those in flight: it
          // waits (its CSR already read) until they finish.
          changed_.wait(lock, [&] {
            return failed_ || in_flight_bytes_ == 0 || options_.memory_limit_bytes <= 0 ||
                   in_flight_bytes_ + charge <= options_.memory_limit_bytes;
          });
          if (failed_) return;
          in_flight_bytes_ += charge;
          stats_.peak_bytes_in_flight = std::max(stats_.peak_bytes_in_flight, in_flight_bytes_);
          stats_.nonzeros += block.nnz();
        }
        RepairOptions repair_options;
        repair_options.threads = 1;
        const std::int64_t nnz = block.nnz();
        Grammar g = compress(block, repair_options);
        block = CsrMatrix<double>{};  // its memory goes back before the grammar waits
        std::unique_lock<std::mutex> lock(mutex_);
        const std::int64_t kept = grammar_bytes(g);
        in_flight_bytes_ += kept - charge;
        done_.emplace(id, Done{extent, std::move(g), kept, nnz});
        hand_on(lock);
        changed_.notify_all();
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!failed_) error_ = std::current_exception();
      failed_ = true;
      changed_.notify_all();
    }
  }

  void finish(BlockCompressStats* stats) {
    if (error_) std::rethrow_exception(error_);
    if (!done_.empty() || next_out_ != next_id_)
      throw Error("compress_blocks: internal error, blocks left unwritten");
    stats_.blocks = next_id_;
    stats_.seconds = elapsed();
    if (stats) *stats = stats_;
  }

  BlockLayout layout() const {
    BlockLayout l;
    l.num_rows = source_.num_rows();
    l.num_cols = next_col_;
    l.blocks = extents_;
    l.validate(source_.name());
    return l;
  }

  BlockCompressStats stats_;

 private:
  struct Done {
    BlockExtent extent;
    Grammar grammar;
    std::int64_t bytes, nnz;
  };

  bool has_room() const {
    if (options_.memory_limit_bytes <= 0) return true;
    // Room for a block as large as the largest so far.
    return in_flight_bytes_ + largest_charge_ <= options_.memory_limit_bytes;
  }
  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

  // Hands on every finished block whose predecessors are done; the sink runs with the
  // lock released so other threads keep compressing, and `sinking_` keeps it serial.
  void hand_on(std::unique_lock<std::mutex>& lock) {
    if (sinking_) return;
    sinking_ = true;
    while (!failed_) {
      auto it = done_.find(next_out_);
      if (it == done_.end()) break;
      Done d = std::move(it->second);
      done_.erase(it);
      const std::int64_t id = next_out_;
      lock.unlock();
      try {
        const std::int64_t symbols = d.grammar.num_rules() + d.grammar.row_offsets.back();
        sink_(id, d.extent, std::move(d.grammar));
        lock.lock();
        ++next_out_;
        extents_.push_back(d.extent);
        in_flight_bytes_ -= d.bytes;
        progress_.blocks_done = next_out_;
        progress_.columns_done = d.extent.col_end;
        progress_.nonzeros_done += d.nnz;
        progress_.grammar_symbols_done += symbols;
        progress_.bytes_in_flight = in_flight_bytes_;
        progress_.seconds = elapsed();
        if (options_.progress) options_.progress(progress_);
      } catch (...) {
        if (!lock.owns_lock()) lock.lock();
        sinking_ = false;
        throw;
      }
    }
    sinking_ = false;
  }

  ColumnBlockSource& source_;
  const BlockCompressOptions& options_;
  const std::function<void(std::int64_t, const BlockExtent&, Grammar&&)>& sink_;
  const std::int64_t block_cols_;
  const std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::int64_t next_id_ = 0, next_out_ = 0, next_col_ = 0, in_flight_bytes_ = 0;
  std::int64_t largest_charge_ = 0;
  std::map<std::int64_t, Done> done_;
  std::vector<BlockExtent> extents_;
  BlockCompressProgress progress_;
  bool exhausted_ = false, failed_ = false, sinking_ = false;
  std::exception_ptr error_;
};

}  // namespace

BlockLayout compress_blocks(
    ColumnBlockSource& source, const BlockCompressOptions& options,
    const std::function<void(std::int64_t, const BlockExtent&, Grammar&&)>& sink,
    BlockCompressStats* stats) {
  if (options.block_cols < 0) throw InvalidArgument("compress_blocks: negative block width");
  if (options.threads < 0) throw InvalidArgument("compress_blocks: negative thread count");
  if (options.memory_limit_bytes < 0)
    throw InvalidArgument("compress_blocks: negative memory limit");
  const int threads = options.threads > 0
                          ? options.threads
                          : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  BlockPipeline pipeline(source, options, sink);
  pipeline.stats_.threads = threads;
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back([&] { pipeline.worker(); });
  pipeline.worker();
  for (auto& t : pool) t.join();
  pipeline.finish(stats);
  auto layout = pipeline.layout();
  if (source.num_cols() >= 0 && layout.num_cols != source.num_cols())
    throw FormatError(source.name(), "delivered " + std::to_string(layout.num_cols) +
                                         " columns, announced " +
                                         std::to_string(source.num_cols()));
  return layout;
}

BlockGrammar compress_blocks(ColumnBlockSource& source, const BlockCompressOptions& options,
                             BlockCompressStats* stats) {
  BlockGrammar result;
  result.layout = compress_blocks(
      source, options,
      [&](std::int64_t id, const BlockExtent&, Grammar&& g) {
        result.block_ids.push_back(id);
        result.grammars.push_back(std::move(g));
      },
      stats);
  return result;
}

#if KCLA_HAVE_MPI

namespace {

// Columns [begin, end) of another source: a rank's share.
class ColumnRangeSource : public ColumnBlockSource {
 public:
  ColumnRangeSource(ColumnBlockSource& inner, std::int64_t begin, std::int64_t end)
      : inner_(inner), begin_(begin), end_(end), next_(begin) {}
  std::int64_t num_rows() const override { return inner_.num_rows(); }
  std::int64_t num_cols() const override { return end_ - begin_; }
  std::string name() const override { return inner_.name(); }
  bool next_block(std::int64_t max_cols, CsrMatrix<double>& block) override {
    if (!skipped_) {
      inner_.skip_columns(begin_);
      skipped_ = true;
    }
    if (next_ >= end_) {
      block = CsrMatrix<double>{};
      return false;
    }
    const auto want = std::min(max_cols, end_ - next_);
    if (!inner_.next_block(want, block) || block.num_cols != want)
      throw FormatError(inner_.name(), "ended at column " + std::to_string(next_) +
                                           ", before the announced " +
                                           std::to_string(inner_.num_cols()));
    next_ += want;
    return true;
  }

 private:
  ColumnBlockSource& inner_;
  std::int64_t begin_, end_, next_;
  bool skipped_ = false;
};

}  // namespace

BlockGrammar compress_blocks(MPI_Comm comm, ColumnBlockSource& source,
                             const BlockCompressOptions& options, BlockCompressStats* stats) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &ranks);
  if (source.num_cols() < 0)
    throw InvalidArgument(source.name() +
                          ": ranks split the columns, so the source must know how many there are");
  BlockCompressOptions o = options;
  o.block_cols = default_block_cols(source.num_rows(), options);
  BlockGrammar share;
  share.layout = BlockLayout::column_blocks(source.num_rows(), source.num_cols(), o.block_cols);
  const auto mine = rank_blocks(share.layout, rank, ranks);
  if (mine.empty()) {
    if (stats) *stats = BlockCompressStats{};
    return share;
  }
  ColumnRangeSource range(source, share.layout.blocks[mine.front()].col_begin,
                          share.layout.blocks[mine.back()].col_end);
  auto local = compress_blocks(range, o, stats);
  for (std::size_t i = 0; i < local.grammars.size(); ++i) {
    share.block_ids.push_back(mine.front() + static_cast<std::int64_t>(i));
    share.grammars.push_back(std::move(local.grammars[i]));
  }
  share.validate(source.name() + " (rank " + std::to_string(rank) + ")");
  return share;
}

#endif

}  // namespace kcla
