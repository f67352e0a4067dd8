// kcla score FILESET --score FILE [--center | --variance-standardize] [--no-mean-imputation]
// Polygenic scores of a PLINK fileset the way `plink2 --score` computes them, on the
// grammar of the genotypes with the standardization and missing calls applied implicitly.
#include "cli_common.hpp"
#include "genotype_input.hpp"

#include <kcla/detail/atomic_file.hpp>
#include <kcla/detail/line_reader.hpp>
#include <kcla/detail/text_fields.hpp>
#include <kcla/genotype_operator.hpp>
#include <kcla/genotype_transform.hpp>
#include <kcla/plink.hpp>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <string_view>
#include <unordered_map>

namespace kcla::cli {

namespace {

Command score_command() {
  Command c("kcla score FILESET --score FILE [options]",
            "Scores every sample of a PLINK 1 fileset (FILESET.bed/.bim/.fam, or the grammar file "
            "`kcla compress FILESET` wrote) with the weights of "
            "a score file, as `plink2 --score FILE 1 2 header-read cols=scoresums [center | "
            "variance-standardize] [no-mean-imputation] --score-col-nums 3-K` does (allele "
            "frequencies over all samples with a call, as plink2 with --nonfounders). The "
            "genotypes are compressed to a grammar and the standardization and missing calls are "
            "applied inside the products; nothing is densified.");
  c.positional("FILESET",
               "PLINK 1 fileset (base name, or any of its .bed/.bim/.fam), or a grammar file "
               "written from one by kcla compress (no reading of the .bed, no RePair)")
      .text("--score", "FILE",
            "variant ID, allele, then one or more weight columns per line; a first line "
            "starting with '#' or with a non-numeric weight is a header (its weight column "
            "names are used); variants absent from the file weigh 0; the allele must be the "
            "variant's A1 or A2; variants with a negative .bim coordinate are ignored (as PLINK "
            "ignores them) and counted")
      .flag("--center", "dosages minus their mean 2f")
      .flag("--variance-standardize",
            "(dosage - 2f) / sqrt(2f(1-f)); variants with no variance add 0 (reported)")
      .flag("--no-mean-imputation", "a missing call adds 0")
      .choice("--imputation", {"plink2", "mean", "none"},
              "how a missing call is imputed: plink2 (default: 2f, scaled but not centered, as "
              "plink2 v2.00a3.5 does), mean (2f, then centered and scaled like any dosage: 0 "
              "when centered) or none (= --no-mean-imputation)")
      .choice("--backend", {"cuda", "openmp", "serial"},
              "where the products run (default: the build's default device)")
      .choice("--precision", {"fp64", "fp32"}, "fp64 (default) or fp32")
      .integer("--threads", "N", "RePair threads (0: all; a fileset only)", 0, 1 << 16)
      .text("-o,--output", "FILE",
            "the scores (default: FILESET.kcla.sscore): #FID IID NAME_SUM ...")
      .flag("--quiet", "no summary on stderr");
  return c;
}

struct ScoreFile {
  std::vector<std::string> names;
  std::vector<double> weights;  // variants x columns, zero for variants absent
  std::vector<bool> other_allele;
  std::int64_t matched = 0;
  std::int64_t negative_position = 0;  // in the file, but ignored as PLINK ignores them
};

bool is_number(std::string_view s) {
  if (s.empty()) return false;
  char* end = nullptr;
  const std::string copy(s);
  std::strtod(copy.c_str(), &end);
  return end == copy.c_str() + copy.size();
}

ScoreFile read_score_file(const std::string& path, const PlinkVariants& fileset) {
  const auto& alleles = fileset.alleles;
  std::unordered_map<std::string, std::int64_t> index;
  for (std::size_t j = 0; j < fileset.ids.size(); ++j) index.emplace(fileset.ids[j], j);
  const auto variants = static_cast<std::int64_t>(fileset.ids.size());
  ScoreFile s;
  s.other_allele.assign(static_cast<std::size_t>(variants), false);
  std::vector<bool> seen(static_cast<std::size_t>(variants), false);
  detail::LineReader in(path);
  std::string_view line;
  std::vector<std::string_view> fields(64);
  std::int64_t columns = -1;
  bool first = true;
  while (in.next(line)) {
    if (detail::is_blank(line)) continue;
    std::size_t n = 0;
    for (;;) {
      n = detail::split_fields(line, fields.data(), fields.size());
      if (n <= fields.size()) break;
      fields.resize(fields.size() * 2);
    }
    if (n < 3)
      in.fail("expected 'variant allele weight...', found " + std::to_string(n) + " fields");
    const bool header = first && (line.front() == '#' || !is_number(fields[2]));
    if (columns < 0) {
      columns = static_cast<std::int64_t>(n) - 2;
      s.weights.assign(static_cast<std::size_t>(variants * columns), 0.0);
      for (std::int64_t c = 0; c < columns; ++c)
        s.names.push_back(header ? std::string(fields[c + 2]) : "SCORE" + std::to_string(c + 1));
    } else if (static_cast<std::int64_t>(n) - 2 != columns) {
      in.fail("has " + std::to_string(n - 2) + " weights, the first line " +
              std::to_string(columns));
    }
    first = false;
    if (header) continue;
    const auto it = index.find(std::string(fields[0]));
    if (it == index.end()) continue;  // not in the fileset (plink2 skips it too)
    const std::int64_t j = it->second;
    if (seen[j]) in.fail("variant '" + std::string(fields[0]) + "' appears twice");
    seen[j] = true;
    if (alleles.positions[j] < 0) {  // PLINK drops variants with a negative coordinate
      ++s.negative_position;
      continue;
    }
    const std::string allele(fields[1]);
    // A2 first: when A1 and A2 are the same (monomorphic sites some arrays write so),
    // plink2 counts A2, its REF.
    if (allele == alleles.allele2[j])
      s.other_allele[j] = true;
    else if (allele == alleles.allele1[j])
      s.other_allele[j] = false;
    else
      in.fail("allele '" + allele + "' is neither A1 '" + alleles.allele1[j] + "' nor A2 '" +
              alleles.allele2[j] + "' of variant '" + std::string(fields[0]) + "'");
    for (std::int64_t c = 0; c < columns; ++c) {
      if (!is_number(fields[c + 2]))
        in.fail("weight '" + std::string(fields[c + 2]) + "' is not a number");
      s.weights[j * columns + c] = std::stod(std::string(fields[c + 2]));
    }
    ++s.matched;
  }
  if (columns < 0) throw FormatError(path, "holds no score line");
  return s;
}

template <class Scalar, class Exec, class Genotypes>  // Grammar or BlockGrammar
std::vector<double> scores(const Genotypes& g, const MissingCalls& missing,
                           const GenotypeTransform& t, const std::vector<double>& w, std::int64_t k,
                           double& seconds) {
  using memory = typename Exec::memory_space;
  GrammarMatrixOptions options;
  options.products = GrammarProducts::right;
  options.expected_vectors = k;
  GenotypeOperator<Scalar, memory> op(g, missing, t, options);
  Kokkos::View<Scalar**, Kokkos::LayoutRight, memory> W("W", op.num_cols(), k),
      Y("Y", op.num_rows(), k);
  auto Wh = Kokkos::create_mirror_view(W);
  for (std::size_t i = 0; i < w.size(); ++i) Wh.data()[i] = static_cast<Scalar>(w[i]);
  Kokkos::deep_copy(W, Wh);
  Exec exec;
  const auto start = std::chrono::steady_clock::now();
  op.apply(exec, W, Y);
  exec.fence();
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto Yh = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), Y);
  return std::vector<double>(Yh.data(), Yh.data() + Yh.span());
}

}  // namespace

int run_score(int argc, char** argv) {
  auto command = score_command();
  const auto args = command.parse(argc, argv, 2);
  if (args.has("help")) {
    std::cout << command.help();
    return ok;
  }
  if (!args.has("score")) throw UsageError("score needs --score FILE");
  if (args.has("center") && args.has("variance-standardize"))
    throw UsageError("--center and --variance-standardize exclude each other");
  const std::string fileset = args.positional()[0];
  const auto t0 = std::chrono::steady_clock::now();
  const auto input = load_genotype_input(fileset, static_cast<int>(args.get_int("threads", 0)));
  const auto file = read_score_file(args.get("score"), input.variants);
  const auto k = static_cast<std::int64_t>(file.names.size());
  const auto stats =
      input.visit([&](const auto& g) { return genotype_statistics(g, input.missing); });
  Plink2TransformOptions o;
  o.centering = args.has("variance-standardize") ? GenotypeCentering::variance_standardize
                : args.has("center")             ? GenotypeCentering::center
                                                 : GenotypeCentering::none;
  const std::string imputation =
      args.get("imputation", args.has("no-mean-imputation") ? "none" : "plink2");
  if (args.has("no-mean-imputation") && imputation != "none")
    throw UsageError("--no-mean-imputation contradicts --imputation " + imputation);
  o.missing = imputation == "plink2" ? MissingCallPolicy::plink2_imputation
              : imputation == "mean" ? MissingCallPolicy::mean_imputation
              : imputation == "none" ? MissingCallPolicy::no_imputation
                                     : throw UsageError("--imputation: plink2, mean or none");
  o.other_allele = file.other_allele;
  const auto transform = plink2_transform(stats, o);
  std::int64_t zero_variance_scored = 0;
  for (auto j : transform.zero_variance)
    for (std::int64_t c = 0; c < k; ++c)
      if (file.weights[j * k + c] != 0) {
        ++zero_variance_scored;
        break;
      }
  const double prepare =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::vector<double> y;
  double product = 0;
  const bool fp32 = args.get("precision", "fp64") == "fp32";
  const std::string backend = with_execution_space(args.get("backend"), [&](auto exec_tag) {
    using Exec = decltype(exec_tag);
    input.visit([&](const auto& g) {
      y = fp32
              ? scores<float, Exec>(g, input.missing, transform.transform, file.weights, k, product)
              : scores<double, Exec>(g, input.missing, transform.transform, file.weights, k,
                                     product);
    });
  });
  const std::string out_path = args.get("output", input.output_base + ".kcla.sscore");
  {
    detail::AtomicFile out(out_path);
    std::string text = "#FID\tIID";
    for (const auto& n : file.names) text += "\t" + n + "_SUM";
    text += "\n";
    char number[32];
    for (std::int64_t i = 0; i < input.num_samples(); ++i) {
      text += input.samples.family_ids[i] + "\t" + input.samples.individual_ids[i];
      for (std::int64_t c = 0; c < k; ++c) {
        std::snprintf(number, sizeof(number), "\t%.10g", y[i * k + c]);
        text += number;
      }
      text += "\n";
      if (text.size() > (1u << 20)) out.write(text), text.clear();
    }
    out.write(text);
    out.commit();
  }
  if (!args.has("quiet")) {
    std::printf(
        "score: %lld samples x %lld variants (%lld scored, %lld missing calls), %lld "
        "score column%s, back end %s\n",
        static_cast<long long>(input.num_samples()), static_cast<long long>(input.num_variants()),
        static_cast<long long>(file.matched), static_cast<long long>(input.missing.count()),
        static_cast<long long>(k), k == 1 ? "" : "s", backend.c_str());
    if (file.negative_position > 0)
      std::printf(
          "note: %lld variants of the score file have a negative .bim coordinate and "
          "are ignored, as PLINK ignores them\n",
          static_cast<long long>(file.negative_position));
    if (zero_variance_scored > 0)
      std::printf("warning: %lld scored variants have no variance and add nothing\n",
                  static_cast<long long>(zero_variance_scored));
    std::printf("time: %s %.3f s, product %.4f ms\n", preparation_label(input), prepare,
                product * 1e3);
    std::printf("wrote %s\n", out_path.c_str());
  }
  return ok;
}

}  // namespace kcla::cli
