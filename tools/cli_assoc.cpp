// kcla assoc FILESET [--pheno FILE] [--covar FILE] ...: per-variant linear regression of
// quantitative phenotypes on allele counts with covariates, as plink2 --glm hide-covar
// computes it, from left products on the grammar of the genotypes.
#include "cli_common.hpp"
#include "genotype_input.hpp"
#include "sample_table.hpp"

#include <kcla/detail/atomic_file.hpp>
#include <kcla/genotype_association.hpp>
#include <kcla/genotype_transform.hpp>
#include <kcla/plink.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

namespace kcla::cli {

namespace {

Command assoc_command() {
  Command c("kcla assoc FILESET [options]",
            "Marginal association of every variant of a PLINK 1 fileset "
            "(FILESET.bed/.bim/.fam, or the grammar file `kcla compress FILESET` wrote) with "
            "quantitative phenotypes: for each variant and "
            "phenotype the least-squares fit of phenotype ~ intercept + covariates + A1 allele "
            "count over the samples with the phenotype, every covariate and the variant's call "
            "present, as `plink2 --glm hide-covar` (linear regression). A1, the allele counted, "
            "is the minor one as plink2 chooses it: the .bim's sixth column (REF) where the "
            "fifth (ALT) has frequency above 1/2 among the founders' calls, else ALT (also "
            "without founders). BETA, SE, T_STAT and the two-sided P from Student's t with "
            "OBS_CT - covariates - 2 degrees of freedom. The genotypes are compressed to a "
            "grammar; one batched left product per set of phenotypes with the same samples does "
            "the work, never densifying.");
  c.positional("FILESET",
               "PLINK 1 fileset (base name, or any of its .bed/.bim/.fam), or a grammar file "
               "written from one by kcla compress (no reading of the .bed, no RePair)")
      .text("--pheno", "FILE",
            "phenotypes: FID IID value... (header #FID/FID/#IID/IID optional); the .fam's "
            "sixth column (PHENO1) is analysed too where it has values, as plink2 does. "
            "Missing: -9, NA, nan, '.'")
      .text("--pheno-name", "A,B", "only these phenotype columns")
      .text("--covar", "FILE", "covariates, same layout; samples missing any are left out")
      .text("--covar-name", "A,B", "only these covariate columns")
      .choice("--a1", {"minor", "alt"},
              "minor (default, as above) or alt (always the fifth column, as plink2 --glm "
              "omit-ref)")
      .real("--max-vif", "V",
            "no statistics where the genotype's variance inflation factor on the covariates "
            "exceeds V (default 50, as plink2 --vif): ERRCODE VIF_INFINITE",
            1.0)
      .choice("--precision", {"fp64", "fp32"}, "fp64 (default) or fp32 products")
      .choice("--backend", {"cuda", "openmp", "serial"},
              "where the products run (default: the build's default device)")
      .integer("--threads", "N", "RePair threads (default 0: all cores; a fileset only)", 0,
               1 << 16)
      .text("-o,--output", "BASE",
            "writes BASE.NAME.glm.linear per phenotype (default: FILESET.kcla)")
      .flag("--quiet", "no summary on stderr")
      .footer(
          R"(Columns: #CHROM POS ID REF ALT A1 TEST OBS_CT BETA SE T_STAT P ERRCODE (plink2's). Variants
with a negative .bim coordinate are left out, as PLINK leaves them out. Case/control
phenotypes (values 0, 1, 2 only) are skipped: plink2 fits logistic regression to them.
Where the founders' ALT frequency is exactly 1/2, plink2 v2.00a3.5 sometimes counts REF:
use --a1 alt (and plink2's omit-ref) to compare such variants.)");
  return c;
}

// Per variant: true when A1 is the .bim's sixth column (REF), i.e. ALT (what the matrix
// counts) has frequency above 1/2 over the founders' present calls.
std::vector<char> a1_is_ref(const GenotypeInput& input, const std::vector<char>& founder) {
  const auto founders =
      input.visit([&](const auto& g) { return genotype_statistics(g, input.missing, founder); });
  std::vector<char> ref(static_cast<std::size_t>(input.num_variants()), 0);
  for (std::int64_t j = 0; j < input.num_variants(); ++j) {
    const auto calls = founders.observed[j];
    ref[j] = calls > 0 && founders.allele_sum[j] > static_cast<double>(calls);  // frequency > 1/2
  }
  return ref;
}

std::vector<std::string> split_names(const std::string& list) {
  std::vector<std::string> out;
  std::stringstream s(list);
  std::string item;
  while (std::getline(s, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

// Keeps the named columns of a table, in the order named; UsageError for an unknown name.
SampleTable select_columns(const SampleTable& t, const std::string& list, const std::string& option,
                           std::size_t samples) {
  if (list.empty()) return t;
  SampleTable out;
  std::vector<std::size_t> keep;
  for (const auto& name : split_names(list)) {
    const auto it = std::find(t.names.begin(), t.names.end(), name);
    if (it == t.names.end()) throw UsageError(option + ": no column '" + name + "'");
    keep.push_back(static_cast<std::size_t>(it - t.names.begin()));
    out.names.push_back(name);
  }
  out.values.resize(samples * keep.size());
  for (std::size_t i = 0; i < samples; ++i)
    for (std::size_t c = 0; c < keep.size(); ++c)
      out.values[i * keep.size() + c] = t.values[i * t.width() + keep[c]];
  return out;
}

// The columns of a, then those of b.
SampleTable join_columns(const SampleTable& a, const SampleTable& b, std::size_t samples) {
  SampleTable out;
  out.names = a.names;
  out.names.insert(out.names.end(), b.names.begin(), b.names.end());
  out.values.reserve(samples * out.width());
  for (std::size_t i = 0; i < samples; ++i) {
    out.values.insert(out.values.end(), a.values.begin() + i * a.width(),
                      a.values.begin() + (i + 1) * a.width());
    out.values.insert(out.values.end(), b.values.begin() + i * b.width(),
                      b.values.begin() + (i + 1) * b.width());
  }
  return out;
}

bool is_case_control(const SampleTable& t, std::size_t column, std::size_t samples) {
  bool any = false;
  for (std::size_t i = 0; i < samples; ++i) {
    const double v = t.values[i * t.width() + column];
    if (std::isnan(v)) continue;
    if (v != 0 && v != 1 && v != 2) return false;
    any = true;
  }
  return any;
}

}  // namespace

int run_assoc(int argc, char** argv) {
  auto command = assoc_command();
  const auto args = command.parse(argc, argv, 2);
  if (args.has("help")) {
    std::cout << command.help();
    return ok;
  }
  const std::string precision = args.get("precision", "fp64");
  LinearAssociationOptions options;
  options.max_vif = args.get_double("max-vif", 50.0);
  const std::string fileset = args.positional()[0];
  const auto t0 = std::chrono::steady_clock::now();
  const auto input = load_genotype_input(fileset, static_cast<int>(args.get_int("threads", 0)));
  const auto& alleles = input.variants.alleles;
  const auto& ids = input.samples;
  const auto n = ids.size();
  const auto fam = read_fam_columns(input.tables, n);
  auto all_phenotypes = fam.phenotype;
  if (args.has("pheno")) {
    // As plink2: the .fam's phenotype stays (as PHENO1) beside the file's columns when it
    // has a value and the file has no column of that name.
    const auto file =
        read_sample_table(args.get("pheno"), ids.family_ids, ids.individual_ids, "PHENO");
    const bool keep_fam =
        std::any_of(fam.phenotype.values.begin(), fam.phenotype.values.end(),
                    [](double v) { return !std::isnan(v); }) &&
        std::find(file.names.begin(), file.names.end(), "PHENO1") == file.names.end();
    all_phenotypes = keep_fam ? join_columns(fam.phenotype, file, n) : file;
  }
  const std::string a1 = args.get("a1", "minor");
  const auto ref_counted = a1 == "minor" ? a1_is_ref(input, fam.founder)
                                         : std::vector<char>(alleles.positions.size(), 0);
  const auto phenotypes = select_columns(all_phenotypes, args.get("pheno-name"), "--pheno-name", n);
  SampleTable covariates;
  if (args.has("covar"))
    covariates = select_columns(
        read_sample_table(args.get("covar"), ids.family_ids, ids.individual_ids, "COVAR"),
        args.get("covar-name"), "--covar-name", n);
  else if (args.has("covar-name"))
    throw UsageError("--covar-name needs --covar");
  // Case/control and empty phenotypes are left out (plink2 fits logistic models to the
  // former).
  std::vector<std::size_t> analysed;
  std::vector<std::string> notes;
  for (std::size_t p = 0; p < phenotypes.width(); ++p) {
    bool any = false;
    for (std::size_t i = 0; i < n && !any; ++i)
      any = !std::isnan(phenotypes.values[i * phenotypes.width() + p]);
    if (!any)
      notes.push_back("phenotype '" + phenotypes.names[p] + "' has no value: skipped");
    else if (is_case_control(phenotypes, p, n))
      notes.push_back("phenotype '" + phenotypes.names[p] +
                      "' is case/control (values 0, 1, 2 only): skipped, kcla assoc fits "
                      "linear models (plink2 fits logistic ones)");
    else
      analysed.push_back(p);
  }
  if (analysed.empty()) {
    for (const auto& note : notes) std::fprintf(stderr, "note: %s\n", note.c_str());
    throw UsageError("no quantitative phenotype to analyse");
  }
  LinearAssociationData data;
  data.samples = static_cast<std::int64_t>(n);
  data.phenotypes = static_cast<std::int64_t>(analysed.size());
  data.covariates = static_cast<std::int64_t>(covariates.width());
  data.phenotype_values.resize(n * analysed.size());
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t p = 0; p < analysed.size(); ++p)
      data.phenotype_values[i * analysed.size() + p] =
          phenotypes.values[i * phenotypes.width() + analysed[p]];
  data.covariate_values = covariates.values;
  if (covariates.width() > 0) {  // a covariate file that matches nobody would give only NA
    std::size_t complete = 0;
    for (std::size_t i = 0; i < n; ++i) {
      bool all = true;
      for (std::size_t c = 0; c < covariates.width(); ++c)
        all = all && !std::isnan(covariates.values[i * covariates.width() + c]);
      complete += all;
    }
    if (complete == 0)
      throw FormatError(args.get("covar"),
                        "no sample of the fileset has every covariate (do its FID/IID match "
                        "the .fam's?)");
  }
  const double prepare =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  LinearAssociationResult result;
  double seconds = 0;
  const std::string backend = with_execution_space(args.get("backend"), [&](auto exec) {
    const auto start = std::chrono::steady_clock::now();
    input.visit([&](const auto& g) {
      result = precision == "fp32"
                   ? linear_association<float>(exec, g, input.missing, data, options)
                   : linear_association<double>(exec, g, input.missing, data, options);
    });
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  });
  const std::string base = args.get("output", input.output_base + ".kcla");
  std::int64_t written = 0, failed = 0;
  std::vector<std::string> paths;
  for (std::size_t p = 0; p < analysed.size(); ++p) {
    const std::string path = base + "." + phenotypes.names[analysed[p]] + ".glm.linear";
    detail::AtomicFile out(path);
    std::string text =
        "#CHROM\tPOS\tID\tREF\tALT\tA1\tTEST\tOBS_CT\tBETA\tSE\tT_STAT\tP\tERRCODE\n";
    char number[160];
    written = failed = 0;
    for (std::int64_t j = 0; j < input.num_variants(); ++j) {
      if (alleles.positions[j] < 0) continue;
      const auto at = j * data.phenotypes + static_cast<std::int64_t>(p);
      const auto status = result.status[at];
      // Counting REF (2 - ALT over the same samples) only turns the slope's sign.
      const double sign = ref_counted[j] ? -1.0 : 1.0;
      text += alleles.chromosomes[j] + "\t" + std::to_string(alleles.positions[j]) + "\t" +
              input.variants.ids[j] + "\t" + alleles.allele2[j] + "\t" + alleles.allele1[j] + "\t" +
              (ref_counted[j] ? alleles.allele2[j] : alleles.allele1[j]) + "\tADD\t" +
              std::to_string(result.observations[at]);
      if (status == AssociationStatus::ok)
        std::snprintf(number, sizeof(number), "\t%.6g\t%.6g\t%.6g\t%.6g\t.\n",
                      sign * result.beta[at], result.standard_error[at],
                      sign * result.t_statistic[at], result.p_value[at]);
      else
        std::snprintf(number, sizeof(number), "\tNA\tNA\tNA\tNA\t%s\n", to_string(status)),
            ++failed;
      text += number;
      ++written;
      if (text.size() > (1u << 20)) out.write(text), text.clear();
    }
    out.write(text);
    out.commit();
    paths.push_back(path);
  }
  if (!args.has("quiet")) {
    std::printf(
        "assoc: %lld samples x %lld variants (%lld tested, %lld missing calls), %lld "
        "covariate%s, %zu phenotype%s, back end %s, %s\n",
        static_cast<long long>(input.num_samples()), static_cast<long long>(input.num_variants()),
        static_cast<long long>(written), static_cast<long long>(input.missing.count()),
        static_cast<long long>(data.covariates), data.covariates == 1 ? "" : "s", analysed.size(),
        analysed.size() == 1 ? "" : "s", backend.c_str(), precision.c_str());
    for (const auto& note : notes) std::printf("note: %s\n", note.c_str());
    if (failed > 0)
      std::printf("note: %lld variants of the last phenotype have no statistics (ERRCODE)\n",
                  static_cast<long long>(failed));
    std::printf("time: %s %.3f s, products and statistics %.3f s\n", preparation_label(input),
                prepare, seconds);
    for (const auto& path : paths) std::printf("wrote %s\n", path.c_str());
  }
  return ok;
}

}  // namespace kcla::cli
