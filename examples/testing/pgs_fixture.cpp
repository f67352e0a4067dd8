// Test support for examples/polygenic_score (not an example itself; plain C++, no kcla, so
// that its expectations are independent of kcla's readers and kernels).
//
//   pgs_fixture write DIR          writes DIR/pgs.{bed,bim,fam} (a small PLINK fileset with
//                                  shared haplotype segments and missing calls),
//                                  DIR/pgs_weights.txt and DIR/pgs_expected.txt (the scores,
//                                  summed here straight from the genotypes)
//   pgs_fixture check DIR SCORES   compares a scores file written by `polygenic_score -o`
//                                  ("FID IID SCORE" or "ROW SCORE" lines) with
//                                  DIR/pgs_expected.txt
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace {

constexpr int kIndividuals = 203;  // not a multiple of 4: the last .bed byte is partial
constexpr int kSnps = 1500;
constexpr int kMissing = -1;

int write(const std::string& dir) {
  // Each individual carries two haplotypes, each copied from one of 8 founders with a
  // switch every ~200 SNPs: long shared segments, as in real panels.
  std::mt19937_64 gen(20240601);
  std::bernoulli_distribution carries(0.3), switches(1.0 / 200), missing(0.01);
  std::uniform_int_distribution<int> founder_of(0, 7);
  std::vector<std::vector<int>> founders(8, std::vector<int>(kSnps));
  for (auto& f : founders)
    for (auto& a : f) a = carries(gen);
  std::vector<std::vector<int>> genotype(kIndividuals, std::vector<int>(kSnps));
  for (auto& row : genotype) {
    int h0 = founder_of(gen), h1 = founder_of(gen);
    for (int j = 0; j < kSnps; ++j) {
      if (switches(gen)) h0 = founder_of(gen);
      if (switches(gen)) h1 = founder_of(gen);
      row[j] = missing(gen) ? kMissing : founders[h0][j] + founders[h1][j];
    }
  }
  std::uniform_real_distribution<double> effect(-0.5, 0.5);
  std::vector<double> weights(kSnps);
  for (auto& w : weights) w = std::round(effect(gen) * 1e4) / 1e4;  // exact in the text

  std::filesystem::create_directories(dir);
  const std::string base = dir + "/pgs";
  std::ofstream fam(base + ".fam"), bim(base + ".bim"), w_out(dir + "/pgs_weights.txt");
  for (int i = 0; i < kIndividuals; ++i)
    fam << "fam" << i / 10 << " ind" << i << " 0 0 " << 1 + i % 2 << " -9\n";
  w_out << "# one weight per SNP, in .bim order\n";
  for (int j = 0; j < kSnps; ++j) {
    bim << "1\trs" << j << "\t0\t" << 1000 * (j + 1) << "\tA\tG\n";
    w_out << weights[j] << "\n";
  }
  // .bed: magic, SNP-major, 4 individuals per byte, low bits first; values count A1:
  // 00 = two copies, 10 = one, 11 = none, 01 = missing.
  std::ofstream bed(base + ".bed", std::ios::binary);
  bed << '\x6c' << '\x1b' << '\x01';
  for (int j = 0; j < kSnps; ++j)
    for (int first = 0; first < kIndividuals; first += 4) {
      unsigned byte = 0;
      for (int q = 0; q < 4 && first + q < kIndividuals; ++q) {
        const int v = genotype[first + q][j];
        const unsigned code = v == kMissing ? 1u : v == 2 ? 0u : v == 1 ? 2u : 3u;
        byte |= code << (2 * q);
      }
      bed << static_cast<char>(byte);
    }

  std::ofstream expected(dir + "/pgs_expected.txt");
  char number[40];
  for (int i = 0; i < kIndividuals; ++i) {
    double score = 0;
    for (int j = 0; j < kSnps; ++j)
      if (genotype[i][j] != kMissing) score += genotype[i][j] * weights[j];
    std::snprintf(number, sizeof number, "%.17g", score);
    expected << "fam" << i / 10 << " ind" << i << " " << number << "\n";
  }
  if (!fam || !bim || !bed || !w_out || !expected) {
    std::cerr << "pgs_fixture: cannot write into " << dir << "\n";
    return 1;
  }
  std::cout << "pgs_fixture: wrote " << base << ".{bed,bim,fam} (" << kIndividuals << " x " << kSnps
            << "), weights and expected scores\n";
  return 0;
}

int check(const std::string& dir, const std::string& scores_path) {
  std::ifstream expected(dir + "/pgs_expected.txt"), scores(scores_path);
  std::string header;
  if (!expected || !scores || !std::getline(scores, header) ||
      (header != "FID IID SCORE" && header != "ROW SCORE")) {
    std::cerr << "pgs_fixture: cannot read " << scores_path << " (or its header)\n";
    return 1;
  }
  // "FID IID SCORE" (PLINK input) names every individual; "ROW SCORE" (a grammar file
  // as input) numbers them.
  const bool named = header == "FID IID SCORE";
  std::string ef, ei, sf, si;
  double e = 0, s = 0, worst = 0;
  int rows = 0;
  while (expected >> ef >> ei >> e) {
    const bool same = named ? (scores >> sf >> si >> s) && sf == ef && si == ei
                            : (scores >> sf >> s) && sf == std::to_string(rows);
    if (!same) {
      std::cerr << "pgs_fixture: row " << rows << ": expected " << ef << " " << ei << "\n";
      return 1;
    }
    worst = std::max(worst, std::abs(s - e) / std::max(1.0, std::abs(e)));
    ++rows;
  }
  if (rows != kIndividuals || (scores >> sf)) {
    std::cerr << "pgs_fixture: " << scores_path << " does not hold exactly " << kIndividuals
              << " scores\n";
    return 1;
  }
  std::cout << "pgs_fixture: " << rows << " scores, max difference " << worst << "\n";
  if (worst > 1e-9) {
    std::cerr << "pgs_fixture: scores differ from the expected ones\n";
    return 1;
  }
  std::cout << "pgs_fixture: scores OK\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "write" && argc == 3) return write(argv[2]);
  if (mode == "check" && argc == 4) return check(argv[2], argv[3]);
  std::cerr << "usage: pgs_fixture write DIR | pgs_fixture check DIR SCORES\n";
  return 2;
}
