#include "sample_table.hpp"

#include <kcla/detail/line_reader.hpp>
#include <kcla/detail/text_fields.hpp>
#include <kcla/error.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <unordered_map>

namespace kcla::cli {

namespace {

bool is_missing_word(std::string_view s) {
  std::string lower(s);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return lower == "-9" || lower == "na" || lower == "nan" || lower == "." || lower == "-9.0";
}

double parse_value(const detail::LineReader& in, std::string_view field) {
  if (is_missing_word(field)) return std::numeric_limits<double>::quiet_NaN();
  double v = 0;
  if (!detail::parse_real(field, v) || !std::isfinite(v))
    in.fail("value '" + std::string(field) +
            "' is not a number (categorical values are not supported; missing: -9, NA)");
  return v;
}

std::size_t split(std::string_view line, std::vector<std::string_view>& fields) {
  for (;;) {
    const auto n = detail::split_fields(line, fields.data(), fields.size());
    if (n <= fields.size()) return n;
    fields.resize(fields.size() * 2);
  }
}

}  // namespace

SampleTable read_sample_table(const std::string& path, const std::vector<std::string>& family_ids,
                              const std::vector<std::string>& individual_ids,
                              const std::string& prefix) {
  const std::size_t samples = individual_ids.size();
  std::unordered_map<std::string, std::size_t> by_fid_iid, by_iid;
  for (std::size_t i = 0; i < samples; ++i) {
    by_fid_iid.emplace(family_ids[i] + '\t' + individual_ids[i], i);
    if (!by_iid.emplace(individual_ids[i], i).second) by_iid[individual_ids[i]] = SIZE_MAX;
  }
  detail::LineReader in(path);
  std::string_view line;
  std::vector<std::string_view> fields(64);
  SampleTable t;
  std::size_t id_columns = 2, width = 0;
  bool first = true;
  std::vector<char> seen(samples, 0);
  while (in.next(line)) {
    if (detail::is_blank(line)) continue;
    const auto n = split(line, fields);
    if (first) {
      first = false;
      const std::string_view head = fields[0];
      if (head == "#FID" || head == "FID" || head == "#IID" || head == "IID") {
        id_columns = (head == "#IID" || head == "IID") ? 1 : 2;
        if (n <= id_columns) in.fail("the header names no value column");
        for (std::size_t c = id_columns; c < n; ++c) t.names.emplace_back(fields[c]);
        width = t.names.size();
        t.values.assign(samples * width, std::numeric_limits<double>::quiet_NaN());
        continue;
      }
      if (n <= 2) in.fail("expected 'FID IID value...', found " + std::to_string(n) + " fields");
      width = n - 2;
      for (std::size_t c = 0; c < width; ++c) t.names.push_back(prefix + std::to_string(c + 1));
      t.values.assign(samples * width, std::numeric_limits<double>::quiet_NaN());
    }
    if (n != id_columns + width)
      in.fail("has " + std::to_string(n) + " fields, expected " +
              std::to_string(id_columns + width));
    std::size_t i = SIZE_MAX;
    if (id_columns == 2) {
      const auto it = by_fid_iid.find(std::string(fields[0]) + '\t' + std::string(fields[1]));
      if (it != by_fid_iid.end()) i = it->second;
    } else {
      const auto it = by_iid.find(std::string(fields[0]));
      if (it != by_iid.end()) {
        if (it->second == SIZE_MAX)
          in.fail("IID '" + std::string(fields[0]) +
                  "' names several samples of the fileset: use FID IID columns");
        i = it->second;
      }
    }
    if (i == SIZE_MAX) continue;  // not in the fileset
    if (seen[i]) in.fail("sample '" + individual_ids[i] + "' appears twice");
    seen[i] = 1;
    for (std::size_t c = 0; c < width; ++c)
      t.values[i * width + c] = parse_value(in, fields[id_columns + c]);
  }
  if (width == 0) throw FormatError(path, "holds no sample line");
  return t;
}

FamColumns read_fam_columns(const PlinkTables& tables, std::size_t samples) {
  auto in = detail::LineReader::over_text(tables.fam_name, tables.fam_text);
  std::string_view line;
  std::vector<std::string_view> fields(16);
  FamColumns f;
  f.phenotype.names = {"PHENO1"};
  f.phenotype.values.reserve(samples);
  f.founder.reserve(samples);
  while (in.next(line)) {
    if (detail::is_blank(line)) continue;
    const auto n = split(line, fields);
    if (n < 6) in.fail("has " + std::to_string(n) + " fields, a .fam line needs six");
    f.founder.push_back(fields[2] == "0" && fields[3] == "0");
    f.phenotype.values.push_back(parse_value(in, fields[5]));
  }
  if (f.founder.size() != samples)
    throw FormatError(tables.fam_name, "has " + std::to_string(f.founder.size()) +
                                           " samples, the genotypes " + std::to_string(samples));
  return f;
}

}  // namespace kcla::cli
