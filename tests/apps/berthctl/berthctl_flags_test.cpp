// Every option of berthctl (apps/berthctl/berthctl_cli.cpp): its default, a bad value
// refused naming the option (exit 2), and --help listing every command and option.
#include <sstream>

#include <gtest/gtest.h>

#include "apps/berthctl/berthctl_cli.hpp"
#include "core/errors.hpp"

using namespace berth;
using namespace berth::cli;

namespace {

std::string refusal(const std::vector<std::string>& args) {
  auto opts = parse_args(args);
  EXPECT_FALSE(opts) << "accepted";
  return opts ? std::string{} : describe(opts.error());
}

} // namespace

TEST(berthctl_flags, every_default) {
  auto o = parse_args({"status"});
  ASSERT_TRUE(o) << describe(o.error());
  EXPECT_EQ(o->socket, "/run/berth/admin.sock");
  EXPECT_FALSE(o->json);
  EXPECT_EQ(o->interval, std::chrono::milliseconds(1000));
  EXPECT_EQ(o->name, "");
  EXPECT_EQ(o->mount_id, "");
  EXPECT_EQ(o->size_bytes, 0u);
  EXPECT_TRUE(o->parameters.empty());
}

TEST(berthctl_flags, every_command_and_its_alias) {
  for (const auto& [args, cmd] : std::vector<std::pair<std::vector<std::string>, command>>{
         {{"volumes"}, command::volumes},
         {{"ls"}, command::volumes},
         {{"inspect", "v"}, command::inspect},
         {{"resize", "v", "1G"}, command::resize},
         {{"modify", "v", "a=1"}, command::modify},
         {{"release", "v", "id"}, command::release},
         {{"status"}, command::status},
         {{"top"}, command::top},
         {{"help"}, command::help},
         {{"-h"}, command::help},
         {{"--version"}, command::version}}) {
    auto o = parse_args(args);
    ASSERT_TRUE(o) << args[0] << ": " << describe(o.error());
    EXPECT_EQ(o->cmd, cmd) << args[0];
  }
  auto r = parse_args({"release", "v", "abc", "--json"});
  ASSERT_TRUE(r) << describe(r.error());
  EXPECT_EQ(r->name, "v");
  EXPECT_EQ(r->mount_id, "abc");
  EXPECT_TRUE(r->json);
}

TEST(berthctl_flags, options_stand_before_or_after_the_command) {
  for (const auto& args : std::vector<std::vector<std::string>>{
         {"--socket", "/s", "--json", "top", "--interval", "2"},
         {"top", "--interval=2", "--json", "--socket=/s"},
         {"--interval", "2", "top", "--socket", "/s", "--json"}}) {
    auto o = parse_args(args);
    ASSERT_TRUE(o) << describe(o.error());
    EXPECT_EQ(o->socket, "/s");
    EXPECT_TRUE(o->json);
    EXPECT_EQ(o->interval, std::chrono::milliseconds(2000));
  }
  // The last of a repeated option wins.
  auto o = parse_args({"--socket", "/a", "volumes", "--socket", "/b"});
  ASSERT_TRUE(o) << describe(o.error());
  EXPECT_EQ(o->socket, "/b");
}

TEST(berthctl_flags, a_bad_value_is_refused_naming_the_option) {
  EXPECT_EQ(refusal({"--socket=", "status"}), "--socket needs a path");
  EXPECT_EQ(refusal({"--socket", "", "status"}), "--socket needs a path");
  EXPECT_EQ(refusal({"top", "--interval", "fast"}),
            "invalid --interval \"fast\": give seconds, e.g. 1 or 0.5");
  EXPECT_EQ(refusal({"top", "--interval=0"}),
            "invalid --interval \"0\": give between 0.1 and 3600 seconds");
  EXPECT_EQ(refusal({"-x", "status"}), "unknown option \"-x\"");
  EXPECT_EQ(refusal({"release", "v"}),
            "release needs a volume name and a mount ID (berthctl inspect NAME lists the IDs)");
  EXPECT_EQ(refusal({"release", "v", "a", "b"}), "release takes a volume name and one mount ID");
  // Every value is checked, even beside --help.
  EXPECT_EQ(refusal({"--help", "--socket="}), "--socket needs a path");
  EXPECT_EQ(refusal({"--help", "--bogus"}), "unknown option \"--bogus\"");
}

TEST(berthctl_flags, run_exits_2_on_a_bad_value_and_0_on_help_to_stdout) {
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(run({"top", "--interval", "0"}, out, err), exit_usage);
  EXPECT_EQ(err.str().rfind("berthctl: invalid --interval \"0\"", 0), 0u) << err.str();
  EXPECT_EQ(out.str(), "");
  std::ostringstream help;
  std::ostringstream none;
  EXPECT_EQ(run({"--help"}, help, none), exit_ok);
  EXPECT_EQ(help.str(), usage());
  EXPECT_EQ(none.str(), "");
}

TEST(berthctl_flags, help_lists_every_command_and_option_it_parses) {
  auto text = usage();
  for (const char* item :
       {"  volumes ", "  inspect NAME ", "  resize NAME SIZE", "  modify NAME KEY=VALUE...",
        "  release NAME MOUNT_ID", "  status ", "  top ", "  --json ",
        "  --socket PATH the admin socket (default /run/berth/admin.sock)", "  --interval SECONDS",
        "  --timeout SECONDS",
        "-h,--help", "  --version"}) {
    EXPECT_NE(text.find(item), std::string::npos) << item << "\n" << text;
  }
  EXPECT_EQ(text.rfind("usage: berthctl [--socket PATH] volumes [--json]\n", 0), 0u) << text;
  EXPECT_NE(text.find("       berthctl --help | --version [--json]\n"), std::string::npos);
}
