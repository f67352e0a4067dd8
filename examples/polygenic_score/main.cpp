// Polygenic scores with a compressed genotype matrix: one score per individual,
//
//     y = G beta,   G: individuals x SNPs (copies of the counted allele, 0/1/2),
//                   beta: one weight (effect size) per SNP,
//
// computed by kcla's grammar engine without decompressing G, and checked against an
// ordinary CSR product of the decompressed matrix.
//
//   polygenic_score INPUT [--weights FILE | --random [--seed N]] [-o SCORES]
//                         [--save-grammar OUT.h5] [--show N]
//
// INPUT   a PLINK 1 fileset (BASE or BASE.bed, with BASE.bim and BASE.fam), a kcla grammar
//         file (.h5, written by `kcla compress` or by --save-grammar), or any other matrix
//         kcla::read_sparse_matrix reads (e.g. a VCF: .vcf, .vcf.gz, .bcf).
// --weights FILE   one weight per SNP, in SNP (column) order, whitespace separated; '#'
//                  starts a comment. Without it (or with --random) the weights are random.
// -o SCORES        writes "FID IID SCORE" lines (PLINK), "SAMPLE SCORE" (VCF) or
//                  "ROW SCORE" lines (anything else).
// --save-grammar   writes the compressed matrix, so the next run skips compression.
//
// Exit status: 0 when the grammar product matches the CSR product, 1 when it does not
// (or on any error), 2 for a usage error.
#include <kcla/csr_spmv.hpp>          // kcla::csr_spmv, kcla::to_device_csr
#include <kcla/grammar_matrix.hpp>    // kcla::GrammarMatrix
#include <kcla/grammar_metrics.hpp>   // kcla::compute_metrics
#include <kcla/grammar_multiply.hpp>  // kcla::multiply
#include <kcla/hdf5_grammar.hpp>      // kcla::read_grammar_hdf5, write_grammar_hdf5
#include <kcla/plink.hpp>             // kcla::read_plink
#include <kcla/repair.hpp>            // kcla::compress
#include <kcla/sparse_matrix_file.hpp>
#include <kcla/vcf.hpp>  // kcla::read_vcf

#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Options {
  std::string input;
  std::string weights;       // empty: random weights
  std::uint64_t seed = 42;   // for random weights
  std::string output;        // scores file
  std::string save_grammar;  // .h5 to write
  int show = 5;              // scores printed
};

const char* kUsage =
    "usage: polygenic_score INPUT [--weights FILE | --random [--seed N]] [-o SCORES]\n"
    "                             [--save-grammar OUT.h5] [--show N]\n"
    "INPUT: PLINK fileset (BASE or BASE.bed), kcla grammar (.h5), or a matrix file that\n"
    "kcla::read_sparse_matrix reads (.vcf.gz, .mtx, ...)\n";

struct UsageError {
  std::string what;
};

Options parse_arguments(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw UsageError{a + " needs a value"};
      return argv[++i];
    };
    if (a == "--weights") {
      o.weights = value();
    } else if (a == "--random") {
      o.weights.clear();
    } else if (a == "--seed") {
      o.seed = std::strtoull(value().c_str(), nullptr, 10);
    } else if (a == "-o" || a == "--output") {
      o.output = value();
    } else if (a == "--save-grammar") {
      o.save_grammar = value();
    } else if (a == "--show") {
      o.show = std::atoi(value().c_str());
    } else if (a == "-h" || a == "--help") {
      throw UsageError{""};
    } else if (!a.empty() && a[0] == '-') {
      throw UsageError{"unknown option " + a};
    } else if (o.input.empty()) {
      o.input = a;
    } else {
      throw UsageError{"more than one INPUT"};
    }
  }
  if (o.input.empty()) throw UsageError{"no INPUT"};
  return o;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool is_plink(const std::string& path) {
  if (ends_with(path, ".bed") || ends_with(path, ".bim") || ends_with(path, ".fam")) return true;
  return !std::ifstream(path).good() && std::ifstream(path + ".bed").good();
}

/// The genotype matrix as a grammar, and one label per individual ("FID IID") when the
/// input says who they are.
struct Genotypes {
  kcla::Grammar grammar;
  std::vector<std::string> labels;
  std::string header = "ROW SCORE";  // of the scores file
};

Genotypes load(const std::string& input) {
  Genotypes out;
  if (kcla::is_hdf5_file(input)) {
    // Already compressed: the grammar file holds (C, R, V), nothing to recompute.
    out.grammar = kcla::read_grammar_hdf5(input);
    return out;
  }
  kcla::CsrMatrix<double> g;
  if (is_plink(input)) {
    // PLINK counts copies of A1 (the .bim's fifth column, usually the minor allele), so
    // most entries are zero: a sparse matrix. Missing calls read as 0.
    auto plink = kcla::read_plink(input);
    for (std::size_t i = 0; i < plink.individual_ids.size(); ++i)
      out.labels.push_back(plink.family_ids[i] + " " + plink.individual_ids[i]);
    out.header = "FID IID SCORE";
    std::printf("read %s: %lld individuals x %lld SNPs, %lld nonzeros, %lld missing calls\n",
                input.c_str(), static_cast<long long>(plink.matrix.num_rows),
                static_cast<long long>(plink.matrix.num_cols),
                static_cast<long long>(plink.matrix.nnz()),
                static_cast<long long>(plink.num_missing));
    g = std::move(plink.matrix);
  } else if (kcla::is_vcf_file_name(input)) {
    // VCF/BCF (through htslib): samples x variants, GT's count of non-REF alleles.
    auto vcf = kcla::read_vcf(input);
    out.labels = vcf.sample_ids;
    out.header = "SAMPLE SCORE";
    std::printf("read %s: %lld samples x %lld variants, %lld nonzeros, %lld missing calls\n",
                input.c_str(), static_cast<long long>(vcf.matrix.num_rows),
                static_cast<long long>(vcf.matrix.num_cols),
                static_cast<long long>(vcf.matrix.nnz()), static_cast<long long>(vcf.num_missing));
    g = std::move(vcf.matrix);
  } else {
    g = kcla::read_sparse_matrix(input);
    std::printf("read %s: %lld x %lld, %lld nonzeros\n", input.c_str(),
                static_cast<long long>(g.num_rows), static_cast<long long>(g.num_cols),
                static_cast<long long>(g.nnz()));
  }
  // RePair over the rows: shared haplotype segments become grammar rules.
  Kokkos::Timer timer;
  out.grammar = kcla::compress(g);
  std::printf("compressed in %.2f s\n", timer.seconds());
  return out;
}

std::vector<double> read_weights(const std::string& path, std::int64_t snps) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::vector<double> w;
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    std::istringstream fields(line);
    std::string field;
    while (fields >> field) {
      char* end = nullptr;
      const double v = std::strtod(field.c_str(), &end);
      if (end == field.c_str() || *end != '\0' || !std::isfinite(v))
        throw std::runtime_error(path + ": '" + field + "' is not a number");
      w.push_back(v);
    }
  }
  if (static_cast<std::int64_t>(w.size()) != snps)
    throw std::runtime_error(path + ": " + std::to_string(w.size()) +
                             " weights, but the matrix has " + std::to_string(snps) + " SNPs");
  return w;
}

std::vector<double> random_weights(std::int64_t snps, std::uint64_t seed) {
  // Effect sizes ~ N(0, 1/snps): scores of order one whatever the panel size.
  std::mt19937_64 gen(seed);
  std::normal_distribution<double> normal(
      0.0, 1.0 / std::sqrt(static_cast<double>(std::max<std::int64_t>(1, snps))));
  std::vector<double> w(static_cast<std::size_t>(snps));
  for (auto& v : w) v = normal(gen);
  return w;
}

int run(const Options& options) {
  using execution_space = Kokkos::DefaultExecutionSpace;
  using memory_space = execution_space::memory_space;
  const execution_space exec;

  Genotypes genotypes = load(options.input);
  const kcla::Grammar& grammar = genotypes.grammar;
  const auto metrics = kcla::compute_metrics(grammar);
  std::printf("grammar: %lld rules, sequence %lld, depth %d; %.2f nonzeros per stored symbol\n",
              static_cast<long long>(metrics.rules), static_cast<long long>(metrics.sequence),
              metrics.depth, metrics.compression_ratio());
  if (!options.save_grammar.empty()) {
    kcla::write_grammar_hdf5(options.save_grammar, grammar);
    std::printf("wrote %s\n", options.save_grammar.c_str());
  }

  const std::int64_t individuals = grammar.num_rows, snps = grammar.num_cols;
  const std::vector<double> weights = options.weights.empty() ? random_weights(snps, options.seed)
                                                              : read_weights(options.weights, snps);

  // The grammar in the default memory space (the GPU's on a CUDA build), ready for
  // products; the schedule is chosen by kcla's cost model.
  kcla::GrammarMatrix<double, memory_space> G(grammar);

  // beta on the device, y = G beta.
  Kokkos::View<double*, memory_space> beta("beta", snps), scores("scores", individuals);
  Kokkos::deep_copy(beta, Kokkos::View<const double*, Kokkos::HostSpace, Kokkos::MemoryUnmanaged>(
                              weights.data(), weights.size()));
  // The first product also sets up the matrix's reusable workspace; time the second.
  kcla::multiply(exec, G, beta, scores);
  Kokkos::Timer timer;
  kcla::multiply(exec, G, beta, scores);
  exec.fence();
  std::printf("y = G beta on %s: %.3f ms (%s schedule)\n", execution_space::name(),
              1e3 * timer.seconds(), kcla::to_string(G.schedule()));

  // The check: an ordinary CSR product of the decompressed matrix.
  const auto csr = kcla::to_device_csr<double, memory_space>(grammar.decompress());
  Kokkos::View<double*, memory_space> reference("reference", individuals);
  kcla::csr_spmv(exec, csr, beta, reference);
  exec.fence();

  const auto y = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), scores);
  const auto r = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), reference);
  // Relative to the largest score: summation order differs between the two products, so
  // agreement is to rounding, not bit for bit.
  double max_diff = 0, max_score = 0;
  for (std::int64_t i = 0; i < individuals; ++i) {
    max_diff = std::max(max_diff, std::abs(y(i) - r(i)));
    max_score = std::max(max_score, std::abs(r(i)));
  }
  const double relative = max_score > 0 ? max_diff / max_score : max_diff;

  const auto label = [&](std::int64_t i) {
    return genotypes.labels.empty() ? std::to_string(i) : genotypes.labels[i];
  };
  std::printf("first scores:\n");
  for (std::int64_t i = 0; i < std::min<std::int64_t>(options.show, individuals); ++i)
    std::printf("  %-24s %14.8f   (CSR %14.8f)\n", label(i).c_str(), y(i), r(i));

  if (!options.output.empty()) {
    std::ofstream out(options.output);
    out << genotypes.header << "\n";
    char number[40];
    for (std::int64_t i = 0; i < individuals; ++i) {
      std::snprintf(number, sizeof number, "%.17g", y(i));
      out << label(i) << ' ' << number << '\n';
    }
    if (!out) throw std::runtime_error(options.output + ": cannot write");
    std::printf("wrote %lld scores to %s\n", static_cast<long long>(individuals),
                options.output.c_str());
  }

  const double tolerance = 1e-10;
  std::printf("max relative difference to CSR: %.3e (tolerance %.0e)\n", relative, tolerance);
  const bool ok = relative <= tolerance;
  std::printf("polygenic_score: %s\n", ok ? "OK" : "FAILED");
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  Kokkos::ScopeGuard kokkos(argc, argv);  // removes --kokkos-* arguments
  try {
    return run(parse_arguments(argc, argv));
  } catch (const UsageError& e) {
    if (!e.what.empty()) std::fprintf(stderr, "polygenic_score: %s\n", e.what.c_str());
    std::fprintf(stderr, "%s", kUsage);
    return e.what.empty() ? 0 : 2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "polygenic_score: %s\n", e.what());
    return 1;
  }
}
