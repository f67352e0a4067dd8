// The options of one kcla command, declared once: CLI11 parses them (typed and
// range-checked values, unknown options refused) and writes --help from the declarations.
#pragma once

#include <kcla/error.hpp>

#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kcla::cli {

class UsageError : public Error {
 public:
  using Error::Error;
};

/// What a command was given, after its declarations checked it: options by long name
/// (without dashes), positional arguments in the order declared.
class Arguments {
 public:
  Arguments() = default;
  Arguments(std::map<std::string, std::string> options, std::vector<std::string> positional)
      : options_(std::move(options)), positional_(std::move(positional)) {}
  bool has(const std::string& name) const { return options_.count(name) > 0; }
  std::string get(const std::string& name, const std::string& fallback = "") const;
  std::int64_t get_int(const std::string& name, std::int64_t fallback) const;
  double get_double(const std::string& name, double fallback) const;
  const std::vector<std::string>& positional() const { return positional_; }

 private:
  std::map<std::string, std::string> options_;
  std::vector<std::string> positional_;
};

/// One command's declarations. `names` is "--long" or "-s,--long"; `value` names the value in
/// --help (FILE, N); help texts are one paragraph each (wrapped for the terminal).
class Command {
 public:
  /// `usage`: the synopsis line ("kcla score FILESET --score FILE [options]"); `about`: what
  /// the command does, printed under it.
  Command(const std::string& usage, const std::string& about);
  ~Command();
  Command(Command&&) noexcept;
  Command& operator=(Command&&) noexcept;

  /// A positional argument; `many`: any number (at least one when `required`).
  Command& positional(const std::string& name, const std::string& help, bool required = true,
                      bool many = false);
  Command& flag(const std::string& names, const std::string& help);
  Command& text(const std::string& names, const std::string& value, const std::string& help);
  /// One of `choices` (compared exactly).
  Command& choice(const std::string& names, const std::vector<std::string>& choices,
                  const std::string& help);
  /// A whole number in [low, high].
  Command& integer(const std::string& names, const std::string& value, const std::string& help,
                   std::int64_t low = std::numeric_limits<std::int64_t>::min(),
                   std::int64_t high = std::numeric_limits<std::int64_t>::max());
  /// A finite number in [low, high].
  Command& real(const std::string& names, const std::string& value, const std::string& help,
                double low = std::numeric_limits<double>::lowest(),
                double high = std::numeric_limits<double>::max());
  /// A size in bytes with an optional K/M/G/T suffix (read with parse_bytes).
  Command& bytes(const std::string& names, const std::string& help);
  /// Options declared after this are listed under `title` in --help (default "Options").
  Command& group(const std::string& title);
  /// Closing text of --help (examples, notes).
  Command& footer(const std::string& text);

  /// Parses argv[first ..]. -h/--help gives has("help"); anything the declarations refuse
  /// throws UsageError naming the option and what is wrong.
  Arguments parse(int argc, char** argv, int first);
  /// The generated --help text.
  std::string help() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// "512M", "8G", "1.5T", "1000000" (bytes); UsageError naming `option` otherwise.
std::int64_t parse_bytes(const std::string& text, const std::string& option);

}  // namespace kcla::cli
