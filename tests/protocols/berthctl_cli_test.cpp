#include "protocols/admin/berthctl_cli.hpp"

#include <sstream>

#include <gtest/gtest.h>

#include "core/errors.hpp"

using namespace berth;
using namespace berth::cli;

namespace {

std::string usage_error(const std::vector<std::string>& args) {
  auto opts = parse_args(args);
  EXPECT_FALSE(opts);
  return opts ? std::string{} : describe(opts.error());
}

} // namespace

TEST(berthctl_cli, parses_commands_and_options) {
  auto v = parse_args({"volumes"});
  ASSERT_TRUE(v);
  EXPECT_EQ(v->cmd, command::volumes);
  EXPECT_EQ(v->socket, "/run/berth/admin.sock");
  EXPECT_FALSE(v->json);
  auto i = parse_args({"--socket", "/tmp/a.sock", "inspect", "v1", "--json"});
  ASSERT_TRUE(i);
  EXPECT_EQ(i->cmd, command::inspect);
  EXPECT_EQ(i->name, "v1");
  EXPECT_EQ(i->socket, "/tmp/a.sock");
  EXPECT_TRUE(i->json);
  auto eq = parse_args({"volumes", "--socket=/x.sock"});
  ASSERT_TRUE(eq);
  EXPECT_EQ(eq->socket, "/x.sock");
  EXPECT_EQ(parse_args({"--help"})->cmd, command::help);
  EXPECT_EQ(parse_args({"volumes", "-h"})->cmd, command::help);
  EXPECT_EQ(parse_args({"--version"})->cmd, command::version);
}

TEST(berthctl_cli, reports_usage_errors) {
  EXPECT_EQ(usage_error({}), "missing command");
  EXPECT_EQ(usage_error({"frobnicate"}), "unknown command \"frobnicate\"");
  EXPECT_EQ(usage_error({"inspect"}), "inspect needs a volume name");
  EXPECT_EQ(usage_error({"inspect", "a", "b"}), "inspect takes one volume name");
  EXPECT_EQ(usage_error({"volumes", "x"}), "volumes takes no arguments, got \"x\"");
  EXPECT_EQ(usage_error({"volumes", "--socket"}), "--socket needs a path");
  EXPECT_EQ(usage_error({"volumes", "--color"}), "unknown option \"--color\"");
}

TEST(berthctl_cli, exit_codes) {
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(run({"bogus"}, out, err), exit_usage);
  EXPECT_NE(err.str().find("usage: berthctl"), std::string::npos);
  EXPECT_EQ(run({"--help"}, out, err), exit_ok);
  EXPECT_EQ(run({"--version"}, out, err), exit_ok);
  EXPECT_NE(out.str().find(std::string{"berthctl "} + BERTH_VERSION), std::string::npos);
  std::ostringstream err2;
  EXPECT_EQ(run({"--socket", "/nonexistent/berth.sock", "volumes"}, out, err2), exit_failure);
  EXPECT_EQ(err2.str(), "berthctl: cannot reach berthd at /nonexistent/berth.sock: connect: No "
                        "such file or directory\n");
}

TEST(berthctl_cli, formats_a_table_with_short_ids) {
  volume_record a;
  a.name = "data";
  a.backend = "block";
  a.owner = owner_docker;
  a.mounts = {{"c89a0f0e1d2c3b4a5968", 2}, {"ffff", 1}};
  a.mounted = true;
  a.mountpoint = "/var/lib/berth/mnt/data";
  EXPECT_EQ(short_id("c89a0f0e1d2c3b4a5968"), "c89a0f0e1d2c");
  EXPECT_EQ(format_table({a}),
            "NAME   OWNER    KIND     BACKEND   MOUNTED   MOUNT IDS               PATH\n"
            "data   docker   volume   block     yes       c89a0f0e1d2c:2,ffff:1   /var/lib/berth/mnt/data\n");
  EXPECT_EQ(format_table({}), "NAME   OWNER   KIND   BACKEND   MOUNTED   MOUNT IDS   PATH\n");
}
