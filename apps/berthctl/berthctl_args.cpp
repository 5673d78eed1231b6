// berthctl's command line: one CLI11 table parses the arguments and writes --help
// (usage()). The values its commands take (sizes, intervals, timeouts) are checked in
// berthctl_values.cpp; what the commands do is berthctl_cli.cpp.

#include "apps/berthctl/berthctl_cli.hpp"
#include "apps/berthctl/berthctl_failure.hpp"

#include <utility>

#include <CLI/CLI.hpp>

#include "apps/berthctl/berthctl_verbs.hpp"
#include "apps/cli/command_line.hpp"
#include "core/errors.hpp"
#include "core/limits.hpp"
#include "core/text.hpp"

namespace berth::cli {

namespace {

/// A usage error whose message is the whole of what berthctl prints (no "--flag: ").
struct usage_failure : CLI::ParseError {
  explicit usage_failure(const std::string& msg)
    : CLI::ParseError("usage", msg, CLI::ExitCodes::ValidationError) {}
};

/// The arguments of a command (NAME, SIZE, ...): `text` is how --help names them.
constexpr const char* args_option = "args";

/// --help: the usage lines, one per command, then the commands and the options, all
/// read from the app that parses.
class berthctl_formatter : public CLI::Formatter {
 public:
  std::string make_help(const CLI::App* app, std::string, CLI::AppFormatMode) const override {
    std::ostringstream out;
    std::string lead = "usage: ";
    for (const auto* sub : commands(app)) {
      out << lead << "berthctl [--socket PATH] " << sub->get_name() << args_of(sub)
          << (sub->get_name() == "top" ? " [--interval SECONDS]" : "") << " [--json]\n";
      lead = "       ";
    }
    out << lead << "berthctl --help | --version [--json]\n\n" << app->get_description() << "\n";
    for (const auto* sub : commands(app)) {
      CLI::detail::format_help(out, sub->get_name() + args_of(sub), sub->get_description(),
                               column_width_);
    }
    for (const auto* opt : app->get_options()) {
      CLI::detail::format_help(out, opt->get_name(false, true) + make_option_opts(opt),
                               opt->get_description(), column_width_);
    }
    return out.str();
  }

 private:
  static std::vector<const CLI::App*> commands(const CLI::App* app) {
    return app->get_subcommands([](const CLI::App* sub) { return !sub->get_group().empty(); });
  }
  static std::string args_of(const CLI::App* sub) {
    const auto* opt = sub->get_option_no_throw(args_option);
    return opt == nullptr || opt->get_option_text().empty() ? "" : " " + opt->get_option_text();
  }
};

/// The one table of berthctl's commands and options: it parses the command line and
/// writes --help. `opts` receives the options, `positional` a command's arguments.
void describe_options(CLI::App& app, options& opts, std::vector<std::string>& positional,
                      bool& help, bool& version) {
  app.set_help_flag();
  app.formatter(std::make_shared<berthctl_formatter>());
  app.get_formatter()->column_width(16);
  app.option_defaults()->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  app.option_defaults()->disable_flag_override(); // --json=yes is no --json
  app.require_subcommand(0, 1);
  app.fallthrough();
  app.allow_extras(); // parse_args names what is left over, as berthctl always did
  struct spec {
    const char* name;
    const char* alias;
    command cmd;
    const char* args; ///< how --help names the arguments ("" = none)
    const char* help;
  };
  for (const auto& c : std::vector<spec>{
         {"volumes", "ls", command::volumes, "",
          "list every record: name, owner (docker or csi), kind, backend,\n"
          "mounted, mount IDs, path"},
         {"inspect", nullptr, command::inspect, "NAME",
          "show one volume, with its size, mutable parameters and\n"
          "modifications (backend modifications applied), and per mount\n"
          "ID its count, the dockerd that made it, when it was last mounted"},
         {"resize", nullptr, command::resize, "NAME SIZE",
          "grow a volume to at least SIZE: bytes, or a number with K, M,\n"
          "G or T (also Ki, Mi, Gi, Ti; powers of 1024), e.g. 10G"},
         {"modify", nullptr, command::modify, "NAME KEY=VALUE...",
          "set mutable parameters (e.g. readAheadKB=256)\n"
          "resize and modify go through the volume's coalescing window,\n"
          "like CSI's ControllerExpandVolume and ControllerModifyVolume,\n"
          "and print the size, parameters and modifications after it"},
         {"release", nullptr, command::release, "NAME MOUNT_ID",
          "drop every count of one Docker mount ID that dockerd will never\n"
          "Unmount (berthctl inspect NAME lists the IDs); refused while the\n"
          "Docker API reports its container running"},
         {"snapshot", nullptr, command::snapshot_list,
          "create VOLUME SNAPSHOT | ls [VOLUME] | rm SNAPSHOT | diff BASE TARGET",
          "a Docker volume's snapshots: create takes one (a block volume's\n"
          "filesystem frozen for the copy while mounted; a directory's\n"
          "copy says crash-consistent if it was mounted), ls lists them (of\n"
          "VOLUME), rm removes one. docker volume create -o from-snapshot=\n"
          "makes a volume of one; a snapshot outlives its volume. diff\n"
          "lists the byte ranges in which block snapshot TARGET differs\n"
          "from BASE, an older one of the same volume (64-KiB blocks)"},
         {"export", nullptr, command::export_volume, "NAME [--since SNAPSHOT] > FILE",
          "write a tar of Docker volume NAME to standard output: of a\n"
          "copy taken for it (as a snapshot is), deleted after; it says\n"
          "on standard error when that copy is crash-consistent only.\n"
          "--since: only the blocks of a block volume changed since its\n"
          "snapshot, in berth's delta format"},
         {"import", nullptr, command::import_volume,
          "NAME [-o KEY=VALUE]... < FILE.tar | --onto VOLUME < FILE.delta",
          "make a new Docker volume NAME holding the tar read from\n"
          "standard input; -o as docker volume create takes them (e.g.\n"
          "-o backend=block -o size=10G, -o uid=1000). A member outside\n"
          "the volume (../, an absolute path) refuses it; nothing is left.\n"
          "--onto: apply a delta (export --since) to block volume VOLUME,\n"
          "made from the delta's base snapshot and not mounted since"},
         {"unclaimed", nullptr, command::unclaimed_list, "[rm NAME]",
          "cluster mode: the CSI volumes recorded here that no BerthVolume\n"
          "names, which berthd keeps; rm NAME removes one, with its\n"
          "storage, once the API server confirms that none names it"},
         {"status", nullptr, command::status, "",
          "version, uptime, whether berthd is ready (and why not), volume\n"
          "and mount counts, journal size, the last fsync's latency"},
         {"top", nullptr, command::top, "",
          "a live view of operations per second and p50/p99 latency per\n"
          "operation, sorted by rate; q quits. --interval SECONDS between\n"
          "refreshes (default 1; 0.1 to 3600). With --json: the view of\n"
          "one interval, then exit (no terminal needed)"},
         {"help", nullptr, command::help, "", ""}}) {
    auto* sub = app.add_subcommand(c.name, c.help);
    if (c.alias != nullptr) {
      sub->alias(c.alias);
    }
    if (c.cmd == command::help) {
      sub->group(""); // the same as --help
    }
    sub->add_option(args_option, positional)
      ->option_text(c.args)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    sub->callback([&opts, cmd = c.cmd] { opts.cmd = cmd; });
    if (c.cmd == command::export_volume) {
      sub
        ->add_option("--since", opts.since,
                     "write only the blocks of a block volume that changed since\n"
                     "its snapshot SNAPSHOT (a delta, not a tar)")
        ->option_text("SNAPSHOT");
    }
    if (c.cmd == command::import_volume) {
      sub
        ->add_option("--onto", opts.onto,
                     "apply the delta read from standard input to the existing\n"
                     "block volume VOLUME (no new volume is made)")
        ->option_text("VOLUME");
      sub->add_option_function<std::vector<std::string>>(
           "-o", [&opts](const std::vector<std::string>& pairs) { opts.import_pairs = pairs; },
           "an option of the new volume, KEY=VALUE")
        ->option_text("KEY=VALUE")
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    }
  }
  app.add_flag("--json", opts.json, "print the JSON that berthd returns, and a failure as\n"
               "{\"error\":{\"code\",\"message\"}} on stderr");
  app.add_option_function<std::string>(
       "--socket",
       [&opts](const std::string& v) {
         if (v.empty()) {
           throw usage_failure("--socket needs a path");
         }
         if (v.size() > limits::max_socket_path_bytes) {
           // The start of the path says which; its length is what is wrong with it.
           throw usage_failure("--socket path " + quote_input(v, 60) + " is "
                               + std::to_string(v.size()) + " bytes; a unix socket path has at "
                               + "most " + std::to_string(limits::max_socket_path_bytes));
         }
         opts.socket = v;
       },
       std::string{"the admin socket (default "} + default_socket + ")")
    ->option_text("PATH");
  app.add_option_function<std::string>(
       "--interval",
       [&opts](const std::string& v) {
         auto d = parse_interval(v);
         if (!d) {
           throw usage_failure(describe(d.error()));
         }
         opts.interval = *d;
       },
       "top's time between two refreshes (default 1; 0.1 to 3600)")
    ->option_text("SECONDS");
  app.add_option_function<std::string>(
       "--timeout",
       [&opts](const std::string& v) {
         auto d = parse_timeout(v);
         if (!d) {
           throw usage_failure(describe(d.error()));
         }
         opts.timeout = *d;
       },
       "how long each call waits for berthd's answer before it fails (default 10; 0.1 "
       "to 3600)")
    ->option_text("SECONDS");
  app.add_flag("--help,-h", help, "this text");
  app.add_flag("--version", version, "berthctl's version");
}

/// The app describe_options fills.
struct berthctl_app {
  CLI::App app{"Inspects and operates a running berthd through its admin socket.", "berthctl"};
  std::vector<std::string> positional;
  bool help = false;
  bool version = false;
  explicit berthctl_app(options& opts) { describe_options(app, opts, positional, help, version); }
};




/// What a flag that lacks its value, or a switch given one, is told.
std::string missing_value(const std::string& what) {
  if (auto refusal = command_line::switch_given_a_value(what); !refusal.empty()) {
    return refusal;
  }
  for (const auto& [flag, msg] :
       {std::pair<std::string, std::string>{"--socket", "--socket needs a path"},
        {"--interval", "--interval needs a number of seconds, e.g. --interval 2"},
        {"--timeout", "--timeout needs a number of seconds, e.g. --timeout 30"}}) {
    if (what.rfind(flag + ":", 0) == 0) {
      return msg;
    }
  }
  return what;
}

} // namespace

caf::expected<options> parse_args(const std::vector<std::string>& args) {
  options opts;
  berthctl_app b{opts};
  try {
    b.app.parse(command_line::for_cli11(args));
  } catch (const usage_failure& e) {
    return bad_usage(e.what());
  } catch (const CLI::ParseError& e) {
    return bad_usage(missing_value(e.what()));
  }
  if (auto extra = b.app.remaining(true); !extra.empty()) {
    if (extra[0].size() > 1 && extra[0][0] == '-') {
      return bad_usage("unknown option " + quote_input(extra[0]));
    }
    return bad_usage("unknown command " + quote_input(extra[0]));
  }
  if (b.help) {
    opts.cmd = command::help;
    return opts;
  }
  if (b.version) {
    opts.cmd = command::version;
    return opts;
  }
  if (b.app.get_subcommands().empty()) {
    return bad_usage("missing command");
  }
  const auto& rest = b.positional;
  const auto cmd = b.app.get_subcommands().front()->get_name();
  switch (opts.cmd) {
    case command::help:
    case command::version:
      break;
    case command::volumes:
    case command::status:
    case command::top:
      if (!rest.empty()) {
        return bad_usage(cmd + " takes no arguments, got " + quote_input(rest[0]));
      }
      break;
    case command::inspect:
      if (rest.size() != 1) {
        return bad_usage(rest.empty() ? "inspect needs a volume name"
                                        : "inspect takes one volume name");
      }
      opts.name = rest[0];
      break;
    case command::resize: {
      if (rest.size() != 2) {
        return bad_usage(rest.size() < 2 ? "resize needs a volume name and a size"
                                           : "resize takes a volume name and one size");
      }
      opts.name = rest[0];
      auto size = parse_size(rest[1]);
      if (!size) {
        return size.error();
      }
      opts.size_bytes = *size;
      break;
    }
    case command::release:
      if (rest.size() != 2) {
        return bad_usage(rest.size() < 2 ? "release needs a volume name and a mount ID "
                                             "(berthctl inspect NAME lists the IDs)"
                                           : "release takes a volume name and one mount ID");
      }
      opts.name = rest[0];
      opts.mount_id = rest[1];
      break;
    case command::snapshot_create:
    case command::snapshot_list:
    case command::snapshot_remove:
    case command::snapshot_diff:
      if (auto err = parse_snapshot_args(rest, opts)) {
        return err;
      }
      if (opts.cmd == command::snapshot_diff && b.app.get_option("--timeout")->count() == 0) {
        opts.timeout = limits::default_snapshot_diff_timeout;
      }
      break;
    case command::unclaimed_list:
    case command::unclaimed_remove:
      if (auto err = parse_unclaimed_args(rest, opts)) {
        return err;
      }
      break;
    case command::export_volume:
      if (rest.size() != 1) {
        return bad_usage(rest.empty() ? "export needs a volume name"
                                      : "export takes one volume name (the tar goes to "
                                        "standard output: berthctl export NAME > NAME.tar)");
      }
      opts.name = rest[0];
      break;
    case command::import_volume:
      if (!opts.onto.empty()) {
        if (!rest.empty() || !opts.import_pairs.empty()) {
          return bad_usage("import --onto VOLUME takes no name and no -o: the delta read from "
                           "standard input changes VOLUME's blocks, and makes no new volume");
        }
        opts.name = opts.onto;
        break;
      }
      if (rest.size() != 1) {
        return bad_usage(rest.empty() ? "import needs the new volume's name"
                                      : "import takes one volume name, and -o KEY=VALUE "
                                        "options (the tar comes from standard input)");
      }
      opts.name = rest[0];
      if (auto err = parse_pairs(opts.import_pairs, opts.parameters)) {
        return err;
      }
      break;
    case command::modify:
      if (rest.size() < 2) {
        return bad_usage("modify needs a volume name and at least one key=value");
      }
      opts.name = rest[0];
      if (auto err = parse_pairs({rest.begin() + 1, rest.end()}, opts.parameters)) {
        return err;
      }
      break;
  }
  if (b.app.get_option("--interval")->count() > 0 && opts.cmd != command::top) {
    return bad_usage("--interval is an option of top only");
  }
  return opts;
}

std::string usage() {
  options opts;
  berthctl_app b{opts};
  return b.app.help();
}

} // namespace berth::cli
