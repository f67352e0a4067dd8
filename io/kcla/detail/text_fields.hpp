// Splitting a text line into whitespace-separated fields and parsing numbers strictly
// (the whole field must be the number), without allocating.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace kcla::detail {

inline bool is_blank_char(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/// True when the line holds only spaces and tabs.
inline bool is_blank(std::string_view line) {
  for (char c : line)
    if (!is_blank_char(c)) return false;
  return true;
}

/// Stores up to `max_fields` fields of `line` in `fields`; returns how many fields the
/// line has in total (which may exceed `max_fields`).
inline std::size_t split_fields(std::string_view line, std::string_view* fields,
                                std::size_t max_fields) {
  std::size_t count = 0, i = 0;
  const std::size_t n = line.size();
  while (true) {
    while (i < n && is_blank_char(line[i])) ++i;
    if (i == n) return count;
    const std::size_t start = i;
    while (i < n && !is_blank_char(line[i])) ++i;
    if (count < max_fields) fields[count] = line.substr(start, i - start);
    ++count;
  }
}

/// Takes the next field off the front of `rest`; false when none is left.
inline bool next_field(std::string_view& rest, std::string_view& field) {
  std::size_t i = 0;
  while (i < rest.size() && is_blank_char(rest[i])) ++i;
  if (i == rest.size()) return false;
  std::size_t j = i;
  while (j < rest.size() && !is_blank_char(rest[j])) ++j;
  field = rest.substr(i, j - i);
  rest.remove_prefix(j);
  return true;
}

/// from_chars rejects a leading '+', which some writers emit.
inline std::string_view strip_plus(std::string_view field) {
  if (field.size() > 1 && field[0] == '+' && field[1] != '-') field.remove_prefix(1);
  return field;
}

inline bool parse_integer(std::string_view field, std::int64_t& value) {
  field = strip_plus(field);
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  return ec == std::errc() && end == field.data() + field.size() && !field.empty();
}

inline bool parse_real(std::string_view field, double& value) {
  field = strip_plus(field);
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  return ec == std::errc() && end == field.data() + field.size() && !field.empty();
}

}  // namespace kcla::detail
