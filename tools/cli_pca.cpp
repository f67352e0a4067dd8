// kcla pca FILESET [--components K] ... : top principal components of a PLINK fileset's
// variance-standardized genotypes (PLINK 2's GRM), by randomized subspace iteration on the
// grammar; writes OUT.eigenval and OUT.eigenvec in plink2's layout.
#include "cli_common.hpp"
#include "genotype_input.hpp"

#include <kcla/detail/atomic_file.hpp>
#include <kcla/genotype_operator.hpp>
#include <kcla/genotype_pca.hpp>
#include <kcla/genotype_transform.hpp>
#include <kcla/plink.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>

namespace kcla::cli {

namespace {

Command pca_command() {
  Command c("kcla pca FILESET [options]",
            "Top principal components of a PLINK 1 fileset (FILESET.bed/.bim/.fam, or the grammar "
            "file `kcla compress FILESET` wrote): the "
            "eigenpairs of the genomic relationship matrix X X^T / M, X the "
            "variance-standardized genotypes ((G - 2f) / sqrt(2f(1-f)), missing calls "
            "mean-imputed, i.e. 0; variants without variance add 0), M the variants (as plink2 "
            "--pca divides). Randomized block Krylov (or subspace iteration): each iteration one "
            "X^T and one X product on the grammar (the GPU when the build has one), small dense "
            "steps on the host.");
  c.positional("FILESET",
               "PLINK 1 fileset (base name, or any of its .bed/.bim/.fam), or a grammar file "
               "written from one by kcla compress (no reading of the .bed, no RePair)")
      .integer("--components", "K", "principal components (default 10)", 1, 1 << 20)
      .choice("--method", {"krylov", "subspace"},
              "krylov (default: every iterate kept, Rayleigh-Ritz on all of them; host memory "
              "16 bytes x samples x (K + P) x (Q + 1)) or subspace (randomized subspace "
              "iteration: only the last block kept)")
      .integer("--oversampling", "P",
               "extra vectors per block (default 10 for krylov, 20 for subspace)", 0, 1 << 20)
      .integer("--iterations", "Q", "power iterations (default 10 for krylov, 20 for subspace)", 0,
               1 << 20)
      .integer("--seed", "N", "random start (default 1)")
      .flag("--exact",
            "the whole GRM (n x n, from products with identity blocks) and a dense eigensolver "
            "instead of the randomized one: exact, for up to 20,000 samples (n^2 doubles of "
            "host memory)")
      .choice("--precision", {"fp64", "fp32"}, "fp64 (default) or fp32 products")
      .choice("--backend", {"cuda", "openmp", "serial"},
              "where the products run (default: the build's default device)")
      .integer("--threads", "N", "RePair threads (default 0: all cores; a fileset only)", 0,
               1 << 16)
      .text("-o,--output", "BASE", "writes BASE.eigenval and BASE.eigenvec (default: FILESET.kcla)")
      .flag("--quiet", "no progress or summary on stderr")
      .footer(
          "As plink2 --pca: only autosomes (chromosome codes 1-22) enter the GRM, and variants "
          "with a\nnegative .bim coordinate are ignored.");
  return c;
}

template <class Scalar, class Exec, class Genotypes>  // Grammar or BlockGrammar
PcaResult run_pca(const Genotypes& g, const MissingCalls& missing, const GenotypeTransform& t,
                  std::int64_t variants, const PcaOptions& options, bool exact, double& seconds) {
  using memory = typename Exec::memory_space;
  GrammarMatrixOptions matrix_options;
  matrix_options.products = GrammarProducts::both;
  matrix_options.expected_vectors = options.components + options.oversampling;
  GenotypeOperator<Scalar, memory> op(g, missing, t, matrix_options);
  Exec exec;
  const auto start = std::chrono::steady_clock::now();
  auto result = exact ? genotype_pca_exact(exec, op, variants, options.components)
                      : genotype_pca(exec, op, variants, options);
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace

int run_pca(int argc, char** argv) {
  auto command = pca_command();
  const auto args = command.parse(argc, argv, 2);
  if (args.has("help")) {
    std::cout << command.help();
    return ok;
  }
  const bool exact = args.has("exact");
  PcaOptions options;
  options.components = args.get_int("components", 10);
  const std::string method = args.get("method", "krylov");
  const bool krylov = method == "krylov";
  options.method = krylov ? PcaMethod::block_krylov : PcaMethod::subspace_iteration;
  options.oversampling = args.get_int("oversampling", krylov ? 10 : 20);
  options.iterations = args.get_int("iterations", krylov ? 10 : 20);
  options.seed = static_cast<std::uint64_t>(args.get_int("seed", 1));
  const std::string precision = args.get("precision", "fp64");
  const std::string fileset = args.positional()[0];
  const auto t0 = std::chrono::steady_clock::now();
  const auto input = load_genotype_input(fileset, static_cast<int>(args.get_int("threads", 0)));
  const auto& alleles = input.variants.alleles;
  Plink2TransformOptions o;
  o.centering = GenotypeCentering::variance_standardize;
  o.missing = MissingCallPolicy::mean_imputation;
  auto transform = plink2_transform(
      input.visit([&](const auto& g) { return genotype_statistics(g, input.missing); }), o);
  // PLINK's GRM uses the autosomal variants and divides by their number (monomorphic
  // ones add 0 but count); negative coordinates are never loaded.
  std::int64_t variants = 0, ignored = 0;
  for (std::int64_t j = 0; j < input.num_variants(); ++j) {
    if (alleles.positions[j] >= 0 && alleles.is_autosome(j)) {
      ++variants;
      continue;
    }
    auto& t = transform.transform;
    t.scale[j] = t.shift[j] = t.missing_value[j] = 0;
    ++ignored;
  }
  if (exact && input.num_samples() > 20000)
    throw UsageError("--exact holds the n x n GRM: at most 20,000 samples (this fileset has " +
                     std::to_string(input.num_samples()) + ")");
  if (variants <= 0)
    throw FormatError(fileset, "no autosomal variant with a non-negative coordinate");
  const double prepare =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!args.has("quiet") && stderr_is_terminal())
    options.progress = [](std::int64_t i, std::int64_t n) {
      std::fprintf(stderr, "\rpca: iteration %lld/%lld", static_cast<long long>(i),
                   static_cast<long long>(n));
      if (i == n) std::fprintf(stderr, "\n");
    };
  PcaResult result;
  double seconds = 0;
  const std::string backend = with_execution_space(args.get("backend"), [&](auto exec_tag) {
    using Exec = decltype(exec_tag);
    input.visit([&](const auto& g) {
      result = precision == "fp32" ? run_pca<float, Exec>(g, input.missing, transform.transform,
                                                          variants, options, exact, seconds)
                                   : run_pca<double, Exec>(g, input.missing, transform.transform,
                                                           variants, options, exact, seconds);
    });
  });
  const std::string base = args.get("output", input.output_base + ".kcla");
  char number[32];
  {
    detail::AtomicFile out(base + ".eigenval");
    for (double v : result.eigenvalues) {
      std::snprintf(number, sizeof(number), "%.10g\n", v);
      out.write(std::string(number));
    }
    out.commit();
  }
  {
    detail::AtomicFile out(base + ".eigenvec");
    std::string text = "#FID\tIID";
    for (std::int64_t c = 0; c < result.components; ++c) text += "\tPC" + std::to_string(c + 1);
    text += "\n";
    for (std::int64_t i = 0; i < result.samples; ++i) {
      text += input.samples.family_ids[i] + "\t" + input.samples.individual_ids[i];
      for (std::int64_t c = 0; c < result.components; ++c) {
        std::snprintf(number, sizeof(number), "\t%.10g",
                      result.eigenvectors[i * result.components + c]);
        text += number;
      }
      text += "\n";
    }
    out.write(text);
    out.commit();
  }
  if (!args.has("quiet")) {
    std::printf(
        "pca: %lld samples x %lld variants (%lld in the GRM%s), %lld components, "
        "back end %s, %s\n",
        static_cast<long long>(input.num_samples()), static_cast<long long>(input.num_variants()),
        static_cast<long long>(variants),
        ignored ? (", " + std::to_string(ignored) +
                   " non-autosomal or with a negative coordinate left out")
                      .c_str()
                : "",
        static_cast<long long>(result.components), backend.c_str(), precision.c_str());
    std::printf("eigenvalues:");
    for (double v : result.eigenvalues) std::printf(" %.6g", v);
    if (exact)
      std::printf("\ntime: %s %.3f s, exact GRM and eigenpairs %.3f s\n", preparation_label(input),
                  prepare, seconds);
    else
      std::printf("\ntime: %s %.3f s, %lld %s iterations %.3f s\n", preparation_label(input),
                  prepare, static_cast<long long>(options.iterations), method.c_str(), seconds);
    std::printf("wrote %s.eigenval and %s.eigenvec\n", base.c_str(), base.c_str());
  }
  return ok;
}

}  // namespace kcla::cli
