#include <kcla/vcf.hpp>

#include <kcla/error.hpp>

#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#if KCLA_HAVE_HTSLIB
#include <htslib/hts.h>
#include <htslib/vcf.h>

#include <cerrno>
#include <cmath>
#include <limits>
#include <memory>
#include <numeric>
#endif

namespace kcla {

bool is_vcf_file_name(const std::string& path) {
  for (const char* suffix : {".vcf", ".vcf.gz", ".vcf.bgz", ".bcf"}) {
    const std::size_t n = std::strlen(suffix);
    if (path.size() > n && path.compare(path.size() - n, n, suffix) == 0) return true;
  }
  return false;
}

#if KCLA_HAVE_HTSLIB

namespace {

struct HtsFileCloser {
  void operator()(htsFile* f) const { hts_close(f); }
};
struct HeaderDeleter {
  void operator()(bcf_hdr_t* h) const { bcf_hdr_destroy(h); }
};
struct RecordDeleter {
  void operator()(bcf1_t* r) const { bcf_destroy(r); }
};

/// A buffer that htslib's bcf_get_* functions grow with realloc.
template <class T>
struct HtsBuffer {
  T* data = nullptr;
  int capacity = 0;
  HtsBuffer() = default;
  HtsBuffer(const HtsBuffer&) = delete;
  HtsBuffer& operator=(const HtsBuffer&) = delete;
  ~HtsBuffer() { std::free(data); }
};

/// Entries collected variant by variant (compressed sparse columns), transposed at the
/// end. Values are floats: GT counts and BCF's DS values are exact in them.
struct ColumnEntries {
  std::vector<std::int64_t> offsets{0};
  std::vector<std::int32_t> rows;
  std::vector<float> values;

  void add(std::int32_t row, float value) {
    rows.push_back(row);
    values.push_back(value);
  }
  void end_column() { offsets.push_back(static_cast<std::int64_t>(rows.size())); }
  std::int64_t columns() const { return static_cast<std::int64_t>(offsets.size()) - 1; }

  /// The samples x variants CSR (columns ascending in every row); releases the columns.
  CsrMatrix<double> to_csr(std::int64_t num_rows) {
    CsrMatrix<double> a;
    a.num_rows = num_rows;
    a.num_cols = columns();
    a.row_offsets.assign(static_cast<std::size_t>(num_rows) + 1, 0);
    for (auto r : rows) ++a.row_offsets[static_cast<std::size_t>(r) + 1];
    std::partial_sum(a.row_offsets.begin(), a.row_offsets.end(), a.row_offsets.begin());
    a.column_indices.resize(rows.size());
    a.values.resize(rows.size());
    std::vector<std::int64_t> next(a.row_offsets.begin(), a.row_offsets.end() - 1);
    for (std::int64_t c = 0; c < a.num_cols; ++c)
      for (auto k = offsets[c]; k < offsets[c + 1]; ++k) {
        const auto at = next[rows[k]]++;
        a.column_indices[at] = static_cast<std::int32_t>(c);
        a.values[at] = values[k];
      }
    *this = ColumnEntries();
    return a;
  }
};

class VcfReader {
 public:
  VcfReader(const std::string& path, const VcfReadOptions& options)
      : path_(path), options_(options) {
    errno = 0;
    file_.reset(bcf_open(path.c_str(), "r"));
    if (!file_)
      throw FormatError(path, std::string("cannot open") +
                                  (errno != 0 ? std::string(": ") + std::strerror(errno) : ""));
    const htsFormat* format = hts_get_format(file_.get());
    if (format->format != vcf && format->format != bcf) {
      char* description = hts_format_description(format);
      const std::string what = description ? description : "unknown";
      std::free(description);
      throw FormatError(path, "not a VCF or BCF file (htslib sees: " + what + ")");
    }
    text_ = format->format == vcf;
    // A bgzip file cut short ends between blocks and would read as a shorter file.
    if (format->compression == bgzf && hts_check_EOF(file_.get()) == 0)
      throw FormatError(path, "truncated: the BGZF end-of-file marker is missing");
    header_.reset(bcf_hdr_read(file_.get()));
    if (!header_)
      throw FormatError(path,
                        "cannot read the VCF/BCF header (missing '#CHROM' line or "
                        "malformed meta-information)");
    record_.reset(bcf_init());
    if (!record_) throw FormatError(path, "out of memory");
  }

  VcfGenotypes read() {
    VcfGenotypes result;
    const int samples = num_samples();
    result.sample_ids = sample_names();

    ColumnEntries entries;
    while (next_column(samples, entries, result)) {
    }
    result.matrix = entries.to_csr(samples);
    result.missing = missing_calls(samples, result.matrix.num_cols);
    return result;
  }

  /// Reads records up to the next one kept and adds its column to `entries` (counts go to
  /// `result`); false at the end of the file.
  bool next_column(int samples, ColumnEntries& entries, VcfGenotypes& result) {
    int ret;
    while ((ret = bcf_read(file_.get(), header_.get(), record_.get())) == 0) {
      ++records_;
      bcf1_t* rec = record_.get();
      // Undefined contigs and tags are tolerated (htslib adds them to the header);
      // anything else htslib flags is a broken record.
      if (rec->errcode & ~(BCF_ERR_CTG_UNDEF | BCF_ERR_TAG_UNDEF))
        fail("htslib could not parse the record (error code " + std::to_string(rec->errcode) + ")");
      if (rec->n_allele > 2) {
        ++result.num_multiallelic;
        if (options_.multiallelic == MultiallelicPolicy::skip) {
          ++result.num_skipped_multiallelic;
          continue;
        }
      }
      if (columns_ >= std::numeric_limits<std::int32_t>::max())
        fail("more than 2^31-1 variants: kcla supports at most 2^31-1 columns");
      if (samples > 0) {
        if (options_.use_dosage_field && read_dosages(samples, entries, result)) {
          ++result.num_dosage_records;
        } else {
          read_genotypes(samples, entries, result);
        }
      }
      entries.end_column();
      ++columns_;
      if (options_.keep_variant_ids) result.variant_ids.push_back(variant_id());
      return true;
    }
    if (ret < -1)
      fail(text_ ? "malformed record (htslib could not parse it)"
                 : "malformed or truncated record (htslib could not read it)",
           /*next_record=*/true);
    return false;
  }

  int num_samples() const { return bcf_hdr_nsamples(header_.get()); }
  std::vector<std::string> sample_names() const {
    std::vector<std::string> names;
    for (int s = 0; s < num_samples(); ++s) names.emplace_back(header_->samples[s]);
    return names;
  }
  /// Streaming: missing calls are counted but not kept (a block source has no place for
  /// them; they read as 0 like in the matrix).
  void forget_missing_positions() { keep_missing_ = false; }

 private:
  /// "line N" for text files, "record N" for BCF; CHROM:POS when the record was parsed.
  [[noreturn]] void fail(const std::string& what, bool next_record = false) const {
    std::string where = text_ ? "line " + std::to_string(file_->lineno)
                              : "record " + std::to_string(records_ + (next_record ? 1 : 0));
    if (!next_record) where += " (" + position() + ")";
    throw FormatError(path_, where + ": " + what);
  }

  std::string position() const {
    const char* chrom = bcf_seqname(header_.get(), record_.get());
    return std::string(chrom ? chrom : "?") + ":" + std::to_string(record_->pos + 1);
  }

  std::string variant_id() {
    bcf1_t* rec = record_.get();
    bcf_unpack(rec, BCF_UN_STR);
    if (rec->d.id && std::strcmp(rec->d.id, ".") != 0) return rec->d.id;
    std::string id = position();
    for (int a = 0; a < rec->n_allele; ++a) {
      id += a < 2 ? ':' : ',';
      id += rec->d.allele[a];
    }
    return id;
  }

  /// The missing calls noted while reading, as a row-wise pattern (columns ascending: they
  /// were noted column by column).
  MissingCalls missing_calls(int samples, std::int64_t columns) const {
    auto m = MissingCalls::none(samples, columns);
    for (const auto& c : missing_) ++m.row_offsets[static_cast<std::size_t>(c.first) + 1];
    for (int s = 0; s < samples; ++s) m.row_offsets[s + 1] += m.row_offsets[s];
    m.columns.resize(missing_.size());
    std::vector<std::int64_t> next(m.row_offsets.begin(), m.row_offsets.end() - 1);
    for (const auto& c : missing_) m.columns[next[c.first]++] = c.second;
    return m;
  }
  void note_missing(int sample, const ColumnEntries& entries, VcfGenotypes& result) {
    ++result.num_missing;
    if (keep_missing_) missing_.emplace_back(sample, static_cast<std::int32_t>(entries.columns()));
  }

  /// GT: non-REF alleles per call. A record without GT makes every call missing.
  void read_genotypes(int samples, ColumnEntries& entries, VcfGenotypes& result) {
    const int n = bcf_get_genotypes(header_.get(), record_.get(), &gt_.data, &gt_.capacity);
    if (n == -1 || n == -3) {  // no GT in the header / in this record
      for (int s = 0; s < samples; ++s) note_missing(s, entries, result);
      return;
    }
    if (n < 0) fail("cannot read FORMAT/GT (htslib error " + std::to_string(n) + ")");
    if (n % samples != 0) fail("FORMAT/GT has a value count that is not a multiple of samples");
    const int ploidy = n / samples;
    const int alleles = record_->n_allele;
    for (int s = 0; s < samples; ++s) {
      const std::int32_t* call = gt_.data + static_cast<std::ptrdiff_t>(s) * ploidy;
      int count = 0, present = 0;
      bool missing = false;
      for (int k = 0; k < ploidy && call[k] != bcf_int32_vector_end; ++k) {
        ++present;
        if (bcf_gt_is_missing(call[k])) {
          missing = true;
          continue;
        }
        const int allele = bcf_gt_allele(call[k]);
        if (allele < 0 || allele >= alleles)
          fail("sample " + result.sample_ids[s] + ": GT allele " + std::to_string(allele) +
               " but the record has " + std::to_string(alleles) + " alleles");
        count += allele != 0;
      }
      if (missing || present == 0) {
        note_missing(s, entries, result);
      } else if (count != 0) {
        entries.add(s, static_cast<float>(count));
      }
    }
  }

  /// DS: the sample's values summed over ALT alleles. False when the record has no DS.
  bool read_dosages(int samples, ColumnEntries& entries, VcfGenotypes& result) {
    const int n =
        bcf_get_format_float(header_.get(), record_.get(), "DS", &ds_.data, &ds_.capacity);
    if (n == -1 || n == -3) return false;  // no DS in the header / in this record
    if (n == -2) fail("FORMAT/DS is not declared Type=Float in the header");
    if (n < 0) fail("cannot read FORMAT/DS (htslib error " + std::to_string(n) + ")");
    if (n % samples != 0) fail("FORMAT/DS has a value count that is not a multiple of samples");
    const int per_sample = n / samples;
    for (int s = 0; s < samples; ++s) {
      const float* values = ds_.data + static_cast<std::ptrdiff_t>(s) * per_sample;
      double sum = 0;
      bool missing = per_sample == 0 || bcf_float_is_vector_end(values[0]);
      for (int k = 0; k < per_sample && !bcf_float_is_vector_end(values[k]); ++k) {
        if (bcf_float_is_missing(values[k])) {
          missing = true;
          break;
        }
        if (!std::isfinite(values[k]) || values[k] < 0)
          fail("sample " + result.sample_ids[s] + ": DS value " + std::to_string(values[k]) +
               " is not a finite non-negative dosage");
        sum += values[k];
      }
      if (missing) {
        note_missing(s, entries, result);
      } else if (sum != 0) {
        entries.add(s, static_cast<float>(sum));
      }
    }
    return true;
  }

  std::string path_;
  VcfReadOptions options_;
  std::unique_ptr<htsFile, HtsFileCloser> file_;
  std::unique_ptr<bcf_hdr_t, HeaderDeleter> header_;
  std::unique_ptr<bcf1_t, RecordDeleter> record_;
  HtsBuffer<std::int32_t> gt_;
  HtsBuffer<float> ds_;
  std::vector<std::pair<int, std::int32_t>> missing_;  // (sample, column) in column order
  bool text_ = true;
  bool keep_missing_ = true;
  std::int64_t records_ = 0;
  std::int64_t columns_ = 0;  // records kept so far
};

/// Records read block by block: at most max_cols kept records per block.
class VcfBlockSource : public ColumnBlockSource {
 public:
  VcfBlockSource(const std::string& path, const VcfReadOptions& options)
      : path_(path), reader_(path, without_ids(options)) {
    reader_.forget_missing_positions();
    samples_ = reader_.num_samples();
    tally_.sample_ids = reader_.sample_names();  // named in errors
  }
  std::int64_t num_rows() const override { return samples_; }
  std::int64_t num_cols() const override { return -1; }  // known at the end of the file
  std::string name() const override { return path_; }
  bool next_block(std::int64_t max_cols, CsrMatrix<double>& block) override {
    if (max_cols <= 0) throw InvalidArgument(path_ + ": block width must be positive");
    ColumnEntries entries;
    while (entries.columns() < max_cols && reader_.next_column(samples_, entries, tally_)) {
    }
    block = entries.to_csr(samples_);
    if (block.num_cols > 0) return true;
    block = CsrMatrix<double>();
    return false;
  }

 private:
  static VcfReadOptions without_ids(VcfReadOptions o) {
    o.keep_variant_ids = false;
    return o;
  }
  std::string path_;
  VcfReader reader_;
  int samples_ = 0;
  VcfGenotypes tally_;  // counts only
};

}  // namespace

std::unique_ptr<ColumnBlockSource> open_vcf_blocks(const std::string& path,
                                                   const VcfReadOptions& options) {
  return std::make_unique<VcfBlockSource>(path, options);
}

VcfGenotypes read_vcf(const std::string& path, const VcfReadOptions& options) {
  return VcfReader(path, options).read();
}

#else  // !KCLA_HAVE_HTSLIB

namespace {
[[noreturn]] void no_htslib(const std::string& path) {
  throw FormatError(path,
                    "kcla was built without htslib, which VCF/BCF input needs (install htslib, "
                    "e.g. Debian's libhts-dev, and configure with KCLA_ENABLE_HTSLIB)");
}
}  // namespace

VcfGenotypes read_vcf(const std::string& path, const VcfReadOptions&) {
  no_htslib(path);
}

std::unique_ptr<ColumnBlockSource> open_vcf_blocks(const std::string& path, const VcfReadOptions&) {
  no_htslib(path);
}

#endif

}  // namespace kcla
