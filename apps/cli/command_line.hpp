#pragma once

// What berth's command lines (berthd, berthd prestop, berthctl, berth-bench) share on top
// of CLI11: one table per program parses the arguments and writes --help, so no flag is
// documented and not parsed, or parsed and not documented.

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace berth::command_line {

/// What is wrong with a value ("" when nothing is); the message goes after the flag and
/// a space ("must not be empty"), or right after it when it starts with ':'.
using checker = std::function<std::string(const std::string&)>;
using storer = std::function<void(const std::string&)>;

inline std::string in_quotes(const std::string& v) {
  return "\"" + v + "\"";
}

/// Readies `app` for a table: --help and --version are plain flags the caller answers
/// after the whole command line parsed (so a bad value is refused even beside --help),
/// the help's flag column is `column` wide, and a flag given twice takes the last value.
inline void prepare(CLI::App& app, size_t column) {
  app.set_help_flag();
  app.get_formatter()->column_width(column);
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.option_defaults()->disable_flag_override(); // --help=x is no --help
}

/// Adds `--flag TEXT` described by `help`: `check` refuses a bad value (the error names
/// the flag and the value), `store` keeps a good one.
inline CLI::Option* value(CLI::App& app, const std::string& flag, const std::string& text,
                          const std::string& help, checker check, storer store) {
  return app
    .add_option_function<std::string>(
      flag,
      [flag, check = std::move(check), store = std::move(store)](const std::string& v) {
        if (auto problem = check(v); !problem.empty()) {
          throw CLI::ValidationError(flag + (problem.front() == ':' ? "" : " ") + problem);
        }
        store(v);
      },
      help)
    ->option_text(text);
}

/// The arguments as CLI11 should see them, last first (the order its parse takes). CLI11
/// reads `--flag=` as a flag without its value and takes the next argument instead;
/// here it is `--flag ""`, an empty value, as the flag's help says ("empty turns it off").
inline std::vector<std::string> for_cli11(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (auto it = args.rbegin(); it != args.rend(); ++it) {
    if (it->size() > 3 && it->rfind("--", 0) == 0 && it->back() == '=') {
      out.emplace_back();
      out.push_back(it->substr(0, it->size() - 1));
    } else {
      out.push_back(*it);
    }
  }
  return out;
}

/// "--FLAG takes no value" when CLI11's message `what` says that a switch was given a
/// value (--json=yes); "" for any other message.
inline std::string switch_given_a_value(const std::string& what) {
  auto at = what.find(" was given a disallowed flag override");
  return at == std::string::npos ? std::string{} : "--" + what.substr(0, at) + " takes no value";
}

/// The message of a parse error: an argument nobody takes is an unknown option, a flag
/// without its value needs one, and one that takes none was given one; each is named.
inline std::string message(const CLI::App& app, const CLI::ParseError& e) {
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr && !app.remaining().empty()) {
    return "unknown option " + in_quotes(app.remaining().front());
  }
  std::string what = e.what();
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr
      && what.find(" required ") != std::string::npos) {
    return what.substr(0, what.find(':')) + " needs a value";
  }
  if (auto refusal = switch_given_a_value(what); !refusal.empty()) {
    return refusal;
  }
  return what;
}

} // namespace berth::command_line
