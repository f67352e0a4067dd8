#include <kcla/config.hpp>

#if KCLA_HAVE_MPI
#include <kcla/hdf5_block_grammar.hpp>
#include <kcla/hdf5_block_grammar_mpi.hpp>

#include <cstdio>

#include "mpi_collective_file.hpp"

#if KCLA_HAVE_PARALLEL_HDF5
#include "hdf5_handle.hpp"
#endif

namespace kcla {

namespace {

int rank_of(MPI_Comm comm) {
  int r = 0;
  MPI_Comm_rank(comm, &r);
  return r;
}
int size_of(MPI_Comm comm) {
  int s = 1;
  MPI_Comm_size(comm, &s);
  return s;
}

#if KCLA_HAVE_PARALLEL_HDF5

// Per block, what every rank must know to create its datasets collectively.
constexpr int kSizeFields = 8;  // id, rows, cols, values, terminals, rules, sequence, owner
std::vector<std::int64_t> share_sizes(const BlockGrammar& share, int rank) {
  std::vector<std::int64_t> s;
  for (std::size_t i = 0; i < share.grammars.size(); ++i) {
    const auto& g = share.grammars[i];
    s.insert(s.end(), {share.block_ids[i], g.num_rows, g.num_cols,
                       static_cast<std::int64_t>(g.values.size()), g.num_terminals(), g.num_rules(),
                       static_cast<std::int64_t>(g.sequence.size()), rank});
  }
  return s;
}

std::vector<std::int64_t> all_sizes(MPI_Comm comm, const std::vector<std::int64_t>& mine) {
  const int ranks = size_of(comm);
  int count = static_cast<int>(mine.size());
  std::vector<int> counts(ranks), displs(ranks);
  MPI_Allgather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, comm);
  int total = 0;
  for (int r = 0; r < ranks; ++r) {
    displs[r] = total;
    total += counts[r];
  }
  std::vector<std::int64_t> all(static_cast<std::size_t>(total));
  MPI_Allgatherv(mine.data(), count, MPI_INT64_T, all.data(), counts.data(), displs.data(),
                 MPI_INT64_T, comm);
  return all;
}

template <class T>
detail::Hdf5Handle create_contiguous(const detail::Hdf5File& file, hid_t group,
                                     const std::string& name, std::int64_t length) {
  const hsize_t n = static_cast<hsize_t>(length);
  detail::Hdf5Handle space(H5Screate_simple(1, &n, nullptr), H5Sclose);
  detail::Hdf5Handle set(H5Dcreate2(group, name.c_str(), detail::hdf5_native_type<T>(), space.get(),
                                    H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
                         H5Dclose);
  if (!set.valid()) file.fail(name, "cannot create dataset");
  return set;
}

template <class T>
void write_all(const detail::Hdf5File& file, const detail::Hdf5Handle& set, const std::string& name,
               const std::vector<T>& data) {
  if (!data.empty() && H5Dwrite(set.get(), detail::hdf5_native_type<T>(), H5S_ALL, H5S_ALL,
                                H5P_DEFAULT, data.data()) < 0)
    file.fail(name, "write failed");
}

#endif

}  // namespace

void write_block_grammar_hdf5(MPI_Comm comm, const std::string& path, const BlockGrammar& share) {
  const int rank = rank_of(comm);
#if !KCLA_HAVE_PARALLEL_HDF5
  (void)rank, (void)share;
  throw FormatError(path,
                    "this kcla's HDF5 is not parallel HDF5 (Debian: libhdf5-openmpi-dev); "
                    "ranks cannot write one file together");
#else
  std::string problem;
  try {
    share.validate("write_block_grammar_hdf5 (rank " + std::to_string(rank) + ")");
  } catch (const Error& e) {
    problem = e.what();
  }
  // The layouts must agree: compare every rank's flattened extents with rank 0's.
  std::vector<std::int64_t> flat{share.layout.num_rows, share.layout.num_cols,
                                 share.layout.num_blocks()};
  for (const auto& e : share.layout.blocks)
    flat.insert(flat.end(), {e.row_begin, e.row_end, e.col_begin, e.col_end});
  std::int64_t length = static_cast<std::int64_t>(flat.size());
  MPI_Bcast(&length, 1, MPI_INT64_T, 0, comm);
  std::vector<std::int64_t> first(static_cast<std::size_t>(length));
  if (rank == 0) first = flat;
  MPI_Bcast(first.data(), static_cast<int>(length), MPI_INT64_T, 0, comm);
  if (problem.empty() && first != flat)
    problem = "rank " + std::to_string(rank) + " has another block layout than rank 0";
  const auto sizes =
      all_sizes(comm, problem.empty() ? share_sizes(share, rank) : std::vector<std::int64_t>{});
  if (detail::any_rank(comm, !problem.empty())) {
    throw InvalidArgument(path + ": " +
                          (problem.empty() ? "another rank's share is invalid" : problem));
  }
  const auto& layout = share.layout;
  std::vector<const std::int64_t*> block(static_cast<std::size_t>(layout.num_blocks()), nullptr);
  for (std::size_t k = 0; k < sizes.size(); k += kSizeFields) {
    const auto id = sizes[k];
    if (block[id])
      throw InvalidArgument(path + ": block " + std::to_string(id) + " is held by two ranks");
    block[id] = &sizes[k];
  }
  for (std::int64_t b = 0; b < layout.num_blocks(); ++b)
    if (!block[b]) throw InvalidArgument(path + ": no rank holds block " + std::to_string(b));

  const std::string temp = detail::collective_temp_path(comm, path);

  bool failed = false;
  std::string error;
  {
    detail::Hdf5Quiet quiet;
    detail::Hdf5Handle access(H5Pcreate(H5P_FILE_ACCESS), H5Pclose);
    H5Pset_fapl_mpio(access.get(), comm, MPI_INFO_NULL);
    detail::use_checksummed_metadata(access.get());  // same container as the serial writer
    const hid_t id = H5Fcreate(temp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get());
    if (detail::any_rank(comm, id < 0)) {
      if (id >= 0) H5Fclose(id);
      throw FormatError(path, "cannot create the file (parallel HDF5)");
    }
    auto file = detail::Hdf5File::adopt(id, path);
    // Collective: every group, attribute and dataset is created by every rank.
    auto root = file.create_group("/kcla_block_grammar");
    file.write_attribute(root.get(), "format", std::string(kBlockGrammarFormatName));
    file.write_attribute(root.get(), "version", std::int64_t{kBlockGrammarFormatVersion});
    file.write_attribute(root.get(), "rows", layout.num_rows);
    file.write_attribute(root.get(), "cols", layout.num_cols);
    file.write_attribute(root.get(), "blocks", layout.num_blocks());
    auto extents =
        create_contiguous<std::int64_t>(file, root.get(), "extents", 4 * layout.num_blocks());
    std::vector<std::int64_t> extent_values(first.begin() + 3, first.end());
    struct Sets {
      detail::Hdf5Handle values, terminal_values, terminal_columns, rule_left, rule_right,
          row_offsets, sequence;
    };
    std::vector<Sets> sets(static_cast<std::size_t>(layout.num_blocks()));
    for (std::int64_t b = 0; b < layout.num_blocks(); ++b) {
      const auto* s = block[b];
      char name[64];
      std::snprintf(name, sizeof name, "/kcla_block_grammar/block_%08lld",
                    static_cast<long long>(b));
      auto group = file.create_group(name);
      file.write_attribute(group.get(), "rows", s[1]);
      file.write_attribute(group.get(), "cols", s[2]);
      file.write_attribute(group.get(), "value_type", std::string("float64"));
      auto& d = sets[b];
      d.values = create_contiguous<double>(file, group.get(), "values", s[3]);
      d.terminal_values =
          create_contiguous<std::int32_t>(file, group.get(), "terminal_values", s[4]);
      d.terminal_columns =
          create_contiguous<std::int32_t>(file, group.get(), "terminal_columns", s[4]);
      d.rule_left = create_contiguous<std::int32_t>(file, group.get(), "rule_left", s[5]);
      d.rule_right = create_contiguous<std::int32_t>(file, group.get(), "rule_right", s[5]);
      d.row_offsets = create_contiguous<std::int64_t>(file, group.get(), "row_offsets", s[1] + 1);
      d.sequence = create_contiguous<std::int32_t>(file, group.get(), "sequence", s[6]);
    }
    // Independent: each rank writes the raw data of its own blocks.
    try {
      if (rank == 0) write_all(file, extents, "extents", extent_values);
      for (std::size_t i = 0; i < share.grammars.size(); ++i) {
        const auto& g = share.grammars[i];
        auto& d = sets[share.block_ids[i]];
        write_all(file, d.values, "values", g.values);
        write_all(file, d.terminal_values, "terminal_values", g.terminal_values);
        write_all(file, d.terminal_columns, "terminal_columns", g.terminal_columns);
        write_all(file, d.rule_left, "rule_left", g.rule_left);
        write_all(file, d.rule_right, "rule_right", g.rule_right);
        write_all(file, d.row_offsets, "row_offsets", g.row_offsets);
        write_all(file, d.sequence, "sequence", g.sequence);
      }
    } catch (const Error& e) {
      failed = true;
      error = e.what();
    }
    sets.clear();
    extents.reset();
    root.reset();
    // The file closes collectively as `file` leaves this scope.
  }
  detail::commit_collective_file(comm, path, temp, failed, error);
#endif
}

BlockGrammar read_block_grammar_hdf5(MPI_Comm comm, const std::string& path) {
  const auto layout = read_block_layout_hdf5(path);
  const auto mine = rank_blocks(layout, rank_of(comm), size_of(comm));
  if (mine.empty()) {
    BlockGrammar none;
    none.layout = layout;
    return none;
  }
  return read_block_grammar_hdf5(path, mine);
}

}  // namespace kcla
#endif
