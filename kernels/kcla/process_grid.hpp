// A P x Q grid of the ranks of an MPI communicator, row-major (rank = p * Q + q), with a
// communicator per grid row (ranks ordered by q) and per grid column (ordered by p): the
// shape 2D block-cyclic matrices and SUMMA products live on. The grid works on duplicates
// of the communicator (its messages never match the application's receives). Copies are
// shallow; the communicators are freed with the last copy (unless MPI is finalized).
#pragma once

#include <kcla/config.hpp>

#if KCLA_HAVE_MPI
#include <kcla/error.hpp>

#include <mpi.h>

#include <memory>
#include <string>

namespace kcla {

class ProcessGrid {
 public:
  ProcessGrid() = default;
  /// Collective: the most square grid with P <= Q and P * Q = the communicator's size.
  explicit ProcessGrid(MPI_Comm comm) : ProcessGrid(comm, square_rows(comm), 0) {}
  /// Collective: a rows x cols grid (cols == 0: size / rows); P * Q must be the size.
  ProcessGrid(MPI_Comm comm, int rows, int cols) {
    int size = 0, rank = 0;
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    if (rows < 1 || rows > size)
      throw InvalidArgument("ProcessGrid: " + std::to_string(rows) + " grid rows for " +
                            std::to_string(size) + " ranks");
    if (cols == 0) cols = size / rows;
    if (rows * cols != size)
      throw InvalidArgument("ProcessGrid: a " + std::to_string(rows) + " x " +
                            std::to_string(cols) + " grid needs " + std::to_string(rows * cols) +
                            " ranks, the communicator has " + std::to_string(size));
    auto s = std::make_shared<State>();
    // The grid's own communicator: its messages never meet the application's.
    MPI_Comm_dup(comm, &s->comm);
    s->rows = rows;
    s->cols = cols;
    s->row = rank / cols;
    s->col = rank % cols;
    MPI_Comm_split(comm, s->row, s->col, &s->row_comm);
    MPI_Comm_split(comm, s->col, s->row, &s->col_comm);
    state_ = std::move(s);
  }

  bool valid() const { return state_ != nullptr; }
  MPI_Comm comm() const { return get().comm; }
  /// Ranks of this rank's grid row, ordered by grid column.
  MPI_Comm row_comm() const { return get().row_comm; }
  /// Ranks of this rank's grid column, ordered by grid row.
  MPI_Comm col_comm() const { return get().col_comm; }
  int rows() const { return get().rows; }
  int cols() const { return get().cols; }
  int row() const { return get().row; }
  int col() const { return get().col; }
  int size() const { return get().rows * get().cols; }
  int rank() const { return get().row * get().cols + get().col; }
  int rank_of(int p, int q) const { return p * get().cols + q; }

  /// Same communicator (identical or congruent) and same shape.
  bool same_as(const ProcessGrid& other) const {
    if (!valid() || !other.valid()) return false;
    if (state_ == other.state_) return true;
    int result = MPI_UNEQUAL;
    MPI_Comm_compare(comm(), other.comm(), &result);
    return (result == MPI_IDENT || result == MPI_CONGRUENT) && rows() == other.rows() &&
           cols() == other.cols();
  }

 private:
  struct State {
    MPI_Comm comm = MPI_COMM_NULL, row_comm = MPI_COMM_NULL, col_comm = MPI_COMM_NULL;
    int rows = 1, cols = 1, row = 0, col = 0;
    ~State() {
      int finalized = 0;
      MPI_Finalized(&finalized);
      if (finalized) return;
      if (row_comm != MPI_COMM_NULL) MPI_Comm_free(&row_comm);
      if (col_comm != MPI_COMM_NULL) MPI_Comm_free(&col_comm);
      if (comm != MPI_COMM_NULL) MPI_Comm_free(&comm);
    }
  };

  static int square_rows(MPI_Comm comm) {
    int size = 1;
    MPI_Comm_size(comm, &size);
    int p = 1;
    for (int d = 1; d * d <= size; ++d)
      if (size % d == 0) p = d;
    return p;
  }

  const State& get() const {
    if (!state_) throw InvalidArgument("ProcessGrid: an empty grid");
    return *state_;
  }

  std::shared_ptr<State> state_;
};

}  // namespace kcla
#endif
