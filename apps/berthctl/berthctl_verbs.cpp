#include "apps/berthctl/berthctl_verbs.hpp"

#include "apps/berthctl/berthctl_failure.hpp"
#include "core/text.hpp"

namespace berth::cli {

caf::error parse_snapshot_args(const std::vector<std::string>& rest, options& opts) {
  const char* forms = "snapshot create VOLUME SNAPSHOT, snapshot ls [VOLUME], "
                      "snapshot rm SNAPSHOT or snapshot diff BASE TARGET";
  if (rest.empty()) {
    return bad_usage(std::string{"snapshot needs a verb: "} + forms);
  }
  const auto& verb = rest[0];
  if (verb == "create" && rest.size() == 3) {
    opts.cmd = command::snapshot_create;
    opts.name = rest[1];
    opts.snapshot = rest[2];
  } else if (verb == "ls" && rest.size() <= 2) {
    opts.cmd = command::snapshot_list;
    opts.name = rest.size() == 2 ? rest[1] : "";
  } else if (verb == "rm" && rest.size() == 2) {
    opts.cmd = command::snapshot_remove;
    opts.name = rest[1];
  } else if (verb == "diff" && rest.size() == 3) {
    opts.cmd = command::snapshot_diff;
    opts.base = rest[1];
    opts.name = rest[2];
  } else if (verb == "create" || verb == "ls" || verb == "rm" || verb == "diff") {
    return bad_usage("snapshot " + verb + " takes "
                     + (verb == "create"   ? std::string{"a volume and a snapshot name"}
                          : verb == "ls"   ? std::string{"at most one volume name"}
                          : verb == "diff" ? std::string{"two snapshot names: the older, then "
                                                         "the newer"}
                                           : std::string{"one snapshot name"}));
  } else {
    return bad_usage("unknown snapshot verb " + quote_input(verb) + ": " + forms);
  }
  return {};
}

caf::error parse_unclaimed_args(const std::vector<std::string>& rest, options& opts) {
  if (rest.empty()) {
    opts.cmd = command::unclaimed_list;
  } else if (rest[0] == "rm" && rest.size() == 2) {
    opts.cmd = command::unclaimed_remove;
    opts.name = rest[1];
  } else if (rest[0] == "rm") {
    return bad_usage("unclaimed rm takes one volume name (berthctl unclaimed lists them)");
  } else {
    return bad_usage("unclaimed takes no arguments, or rm NAME; got " + quote_input(rest[0]));
  }
  return {};
}

caf::error parse_pairs(const std::vector<std::string>& pairs, option_map& out) {
  for (const auto& pair : pairs) {
    auto eq = pair.find('=');
    if (eq == std::string::npos) {
      return bad_usage(quote_input(pair) + " is not key=value");
    }
    if (eq == 0) {
      return bad_usage(quote_input(pair) + " has an empty key: write key=value");
    }
    if (!out.emplace(pair.substr(0, eq), pair.substr(eq + 1)).second) {
      return bad_usage("key " + quote_input(pair.substr(0, eq)) + " is given twice");
    }
  }
  return {};
}

} // namespace berth::cli
