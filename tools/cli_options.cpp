#include "cli_options.hpp"

#include <CLI/CLI.hpp>

#include <cmath>
#include <list>
#include <optional>
#include <sstream>
#include <utility>

namespace kcla::cli {

namespace {

// Width of the option column in --help, and of the whole text.
constexpr std::size_t kOptionColumn = 26;
constexpr std::size_t kHelpWidth = 92;

// Word-wraps one paragraph (or several, separated by '\n') to `width` columns.
std::string wrap(const std::string& text, std::size_t width) {
  std::string out;
  std::istringstream paragraphs(text);
  std::string paragraph;
  bool first_paragraph = true;
  while (std::getline(paragraphs, paragraph)) {
    if (!first_paragraph) out += '\n';
    first_paragraph = false;
    std::istringstream words(paragraph);
    std::string word;
    std::size_t column = 0;
    while (words >> word) {
      if (column > 0 && column + 1 + word.size() > width) {
        out += '\n';
        column = 0;
      } else if (column > 0) {
        out += ' ';
        ++column;
      }
      out += word;
      column += word.size();
    }
  }
  return out;
}

// A whole number / a finite number spelled out completely, or nothing.
std::optional<std::int64_t> parse_integer(const std::string& v) {
  try {
    std::size_t used = 0;
    const long long n = std::stoll(v, &used);
    if (used == v.size()) return n;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

std::optional<double> parse_real(const std::string& v) {
  try {
    std::size_t used = 0;
    const double d = std::stod(v, &used);
    if (used == v.size() && std::isfinite(d)) return d;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

// The long name of "-o,--output" or "--output": "output"; of a positional, its name.
std::string key_of(const std::string& names) {
  const auto dashes = names.rfind("--");
  return dashes == std::string::npos ? names : names.substr(dashes + 2);
}

// --help as kcla writes it: the synopsis, what the command does, then the options.
class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter(std::string usage, std::string about)
      : usage_(std::move(usage)), about_(std::move(about)) {
    column_width(kOptionColumn);
  }
  std::string make_help(const CLI::App* app, std::string, CLI::AppFormatMode mode) const override {
    std::ostringstream out;
    out << "usage: " << usage_ << "\n\n" << wrap(about_, kHelpWidth) << "\n";
    out << make_positionals(app);
    out << make_groups(app, mode);
    const std::string footer = app->get_footer();
    if (!footer.empty()) out << "\n" << footer << "\n";
    return out.str();
  }

 private:
  std::string usage_, about_;
};

}  // namespace

struct Command::State {
  CLI::App app;
  // Bound storage: map and list nodes never move, so CLI11 may keep references to them.
  std::map<std::string, std::string> values;
  struct Positional {
    std::string one;
    std::vector<std::string> many;
    CLI::Option* option = nullptr;
    bool is_many = false;
  };
  std::list<Positional> positionals;
  std::vector<std::pair<std::string, CLI::Option*>> options;
  std::vector<std::pair<std::string, CLI::Option*>> flags;
  std::string group = "Options";
};

Command::Command(const std::string& usage, const std::string& about)
    : state_(std::make_unique<State>()) {
  auto& app = state_->app;
  app.formatter(std::make_shared<HelpFormatter>(usage, about));
  app.set_help_flag("-h,--help", "this help");
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::Throw);
  // Unknown options and surplus arguments are reported by parse() in kcla's words.
  app.allow_extras(true);
}

Command::~Command() = default;
Command::Command(Command&&) noexcept = default;
Command& Command::operator=(Command&&) noexcept = default;

Command& Command::positional(const std::string& name, const std::string& help, bool required,
                             bool many) {
  auto& slot = state_->positionals.emplace_back();
  slot.is_many = many;
  const auto description = wrap(help, kHelpWidth - kOptionColumn);
  slot.option = many ? state_->app.add_option(name, slot.many, description)
                     : state_->app.add_option(name, slot.one, description);
  slot.option->required(required)->type_name("");
  return *this;
}

Command& Command::flag(const std::string& names, const std::string& help) {
  const std::string description = wrap(help, kHelpWidth - kOptionColumn);
  auto* option = state_->app.add_flag(names, description);
  option->group(state_->group);
  state_->flags.emplace_back(key_of(names), option);
  return *this;
}

Command& Command::text(const std::string& names, const std::string& value,
                       const std::string& help) {
  const auto key = key_of(names);
  auto* option =
      state_->app.add_option(names, state_->values[key], wrap(help, kHelpWidth - kOptionColumn));
  option->type_name(value);
  option->group(state_->group);
  state_->options.emplace_back(key, option);
  return *this;
}

Command& Command::choice(const std::string& names, const std::vector<std::string>& choices,
                         const std::string& help) {
  std::string listed;
  for (std::size_t i = 0; i < choices.size(); ++i)
    listed += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
  text(names, "{" + CLI::detail::join(choices, "|") + "}", help);
  state_->options.back().second->check(CLI::Validator(
      [choices, listed](std::string& v) -> std::string {
        for (const auto& c : choices)
          if (v == c) return {};
        return listed + " (not '" + v + "')";
      },
      ""));
  return *this;
}

Command& Command::integer(const std::string& names, const std::string& value,
                          const std::string& help, std::int64_t low, std::int64_t high) {
  text(names, value, help);
  state_->options.back().second->check(CLI::Validator(
      [low, high](std::string& v) -> std::string {
        const auto parsed = parse_integer(v);
        if (!parsed) return "expects an integer, got '" + v + "'";
        const std::int64_t n = *parsed;
        if (n < low || n > high) {
          const auto bound = n < low ? ">= " + std::to_string(low) : "<= " + std::to_string(high);
          return "expects an integer " + bound + ", got " + v;
        }
        return {};
      },
      ""));
  return *this;
}

Command& Command::real(const std::string& names, const std::string& value, const std::string& help,
                       double low, double high) {
  text(names, value, help);
  state_->options.back().second->check(CLI::Validator(
      [low, high](std::string& v) -> std::string {
        const auto parsed = parse_real(v);
        if (!parsed) return "expects a number, got '" + v + "'";
        const double d = *parsed;
        if (d < low || d > high) {
          std::ostringstream bound;
          bound << (d < low ? ">= " : "<= ") << (d < low ? low : high);
          return "expects a number " + bound.str() + ", got " + v;
        }
        return {};
      },
      ""));
  return *this;
}

Command& Command::bytes(const std::string& names, const std::string& help) {
  const auto key = key_of(names);
  text(names, "SIZE", help);
  state_->options.back().second->check(CLI::Validator(
      [key](std::string& v) -> std::string {
        try {
          (void)parse_bytes(v, key);
        } catch (const UsageError&) {
          return "'" + v + "' is not a size (e.g. 512M, 8G)";
        }
        return {};
      },
      ""));
  return *this;
}

Command& Command::group(const std::string& title) {
  state_->group = title;
  return *this;
}

Command& Command::footer(const std::string& text) {
  state_->app.footer(text);
  return *this;
}

Arguments Command::parse(int argc, char** argv, int first) {
  std::vector<std::string> args;
  // CLI11 takes them last to first.
  for (int i = argc - 1; i >= first; --i) args.emplace_back(argv[i]);
  std::map<std::string, std::string> given;
  try {
    state_->app.parse(args);
  } catch (const CLI::CallForHelp&) {
    given["help"] = "1";
    return Arguments(std::move(given), {});
  } catch (const CLI::ParseError& e) {
    throw UsageError(std::string(e.what()) + " (see --help)");
  }
  for (const auto& extra : state_->app.remaining()) {
    if (extra.size() > 1 && extra[0] == '-')
      throw UsageError("unknown option " + extra.substr(0, extra.find('=')) + " (see --help)");
    throw UsageError("unexpected argument '" + extra + "' (see --help)");
  }
  for (const auto& [key, option] : state_->options)
    if (option->count() > 0) given[key] = state_->values[key];
  for (const auto& [key, option] : state_->flags)
    if (option->count() > 0) given[key] = "1";
  std::vector<std::string> positional;
  for (const auto& slot : state_->positionals) {
    if (slot.option->count() == 0) continue;
    if (slot.is_many)
      positional.insert(positional.end(), slot.many.begin(), slot.many.end());
    else
      positional.push_back(slot.one);
  }
  return Arguments(std::move(given), std::move(positional));
}

std::string Command::help() const {
  return state_->app.help();
}

std::string Arguments::get(const std::string& name, const std::string& fallback) const {
  auto it = options_.find(name);
  return it == options_.end() ? fallback : it->second;
}

std::int64_t Arguments::get_int(const std::string& name, std::int64_t fallback) const {
  if (!has(name)) return fallback;
  const auto n = parse_integer(options_.at(name));
  if (!n) throw UsageError("--" + name + " expects an integer, got '" + options_.at(name) + "'");
  return *n;
}

double Arguments::get_double(const std::string& name, double fallback) const {
  if (!has(name)) return fallback;
  const auto d = parse_real(options_.at(name));
  if (!d) throw UsageError("--" + name + " expects a number, got '" + options_.at(name) + "'");
  return *d;
}

std::int64_t parse_bytes(const std::string& text, const std::string& option) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  double scale = 1;
  const std::string unit = text.substr(used);
  if (unit == "K" || unit == "k")
    scale = 1024.0;
  else if (unit == "M" || unit == "m")
    scale = 1024.0 * 1024;
  else if (unit == "G" || unit == "g")
    scale = 1024.0 * 1024 * 1024;
  else if (unit == "T" || unit == "t")
    scale = 1024.0 * 1024 * 1024 * 1024;
  else if (!unit.empty())
    used = 0;
  if (used == 0 || !(value >= 0))
    throw UsageError("--" + option + ": '" + text + "' is not a size (e.g. 512M, 8G)");
  return static_cast<std::int64_t>(value * scale);
}

}  // namespace kcla::cli
