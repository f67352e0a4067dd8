// read_sparse_matrix: each file name reaches the reader it names, and others are refused.
#include <kcla/sparse_matrix_file.hpp>

#include <kcla/matrix_market.hpp>
#include <kcla/metis_graph.hpp>
#include <kcla/ms_format.hpp>
#include <kcla/plink.hpp>

#include <gtest/gtest.h>

#include "test_support.hpp"

namespace {

using kcla::test::csr_equal;
using kcla::test::throws_with;

TEST(SparseMatrixFile, DispatchesOnTheFileName) {
  kcla::test::TempDir tmp;
  auto gen = kcla::test::rng();
  const auto a = kcla::test::random_csr(gen, 20, 30, 0.2);
  kcla::write_matrix_market(tmp.path("a.mtx"), a);
  EXPECT_TRUE(csr_equal(kcla::read_sparse_matrix(tmp.path("a.mtx")), a));

  const auto graph = tmp.write("g.graph", "3 2\n2\n1 3\n2\n");
  EXPECT_TRUE(csr_equal(kcla::read_sparse_matrix(graph), kcla::read_metis_graph(graph)));
  EXPECT_EQ(kcla::read_sparse_matrix(graph).nnz(), 4);

  const std::string ms = "ms 4 1\n1\n\n//\nsegsites: 2\npositions: 0.1 0.2\n10\n11\n00\n01\n";
  for (const char* name : {"h.ms", "h.scrm"}) {
    const auto path = tmp.write(name, ms);
    const auto m = kcla::read_sparse_matrix(path);
    EXPECT_TRUE(csr_equal(m, kcla::read_ms(path).matrix)) << name;
    EXPECT_EQ(m.num_rows, 2) << "diploid by default";
  }

  // PLINK: one individual, one SNP, heterozygous (code 10 in the low bits).
  tmp.write("p.fam", "f i 0 0 1 -9\n");
  tmp.write("p.bim", "1 rs1 0 1 A G\n");
  tmp.write("p.bed", std::string("\x6c\x1b\x01\x02", 4));
  for (const char* name : {"p", "p.bed", "p.bim", "p.fam"}) {
    const auto m = kcla::read_sparse_matrix(tmp.path(name));
    ASSERT_EQ(m.nnz(), 1) << name;
    EXPECT_EQ(m.values[0], 1.0) << name;
  }
}

TEST(SparseMatrixFile, RefusesUnknownKinds) {
  kcla::test::TempDir tmp;
  for (const char* name : {"a.txt", "a.mtx.gz", "no_such_base", "a.csv"}) {
    const auto path = tmp.path(name);
    EXPECT_TRUE(throws_with<kcla::FormatError>([&] { kcla::read_sparse_matrix(path); },
                                               {path, "unknown kind of matrix file"}))
        << name;
  }
  // A known extension whose file is missing: the reader's own error.
  EXPECT_TRUE(throws_with<kcla::FormatError>([&] { kcla::read_sparse_matrix(tmp.path("x.mtx")); },
                                             {"x.mtx", "cannot open"}));
}

}  // namespace
