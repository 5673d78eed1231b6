// berthctl's side of copies: export's and import's arguments and their refusal of a
// terminal, and how a snapshot's or clone's consistency is shown.

#include "apps/berthctl/berthctl_cli.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <sstream>

#include <gtest/gtest.h>

#include "core/errors.hpp"

using namespace berth;
using namespace berth::cli;

TEST(berthctl_cli, parses_export_and_import_with_their_options) {
  auto exp = parse_args({"export", "v1"});
  ASSERT_TRUE(exp) << describe(exp.error());
  EXPECT_EQ(exp->cmd, command::export_volume);
  EXPECT_EQ(exp->name, "v1");
  auto imp = parse_args({"import", "v2", "-o", "backend=block", "-o", "size=64M"});
  ASSERT_TRUE(imp) << describe(imp.error());
  EXPECT_EQ(imp->cmd, command::import_volume);
  EXPECT_EQ(imp->name, "v2");
  EXPECT_EQ(imp->parameters, (option_map{{"backend", "block"}, {"size", "64M"}}));
  auto twice = parse_args({"import", "v2", "-o", "size=1G", "-o", "size=2G"});
  ASSERT_FALSE(twice);
  EXPECT_NE(describe(twice.error()).find("\"size\" is given twice"), std::string::npos)
    << describe(twice.error());
  auto bare = parse_args({"import", "v2", "-o", "size"});
  ASSERT_FALSE(bare);
  EXPECT_NE(describe(bare.error()).find("is not key=value"), std::string::npos);
  auto two = parse_args({"export", "v1", "v2"});
  ASSERT_FALSE(two);
  EXPECT_NE(describe(two.error()).find("export takes one volume name"), std::string::npos);
  EXPECT_NE(usage().find("import NAME [-o KEY=VALUE]... < FILE.tar"), std::string::npos);
}

TEST(berthctl_cli, export_and_import_refuse_a_terminal) {
  int master = ::posix_openpt(O_RDWR | O_NOCTTY);
  if (master < 0 || ::grantpt(master) != 0 || ::unlockpt(master) != 0) {
    GTEST_SKIP() << "no pseudo-terminal here";
  }
  int tty = ::open(::ptsname(master), O_RDWR | O_NOCTTY);
  ASSERT_GE(tty, 0);
  std::ostringstream out, err;
  EXPECT_EQ(run({"--socket", "/nonexistent/admin.sock", "export", "v1"}, out, err, 0, tty),
            exit_failure);
  EXPECT_NE(err.str().find("standard output, which is a terminal"), std::string::npos) << err.str();
  err.str("");
  EXPECT_EQ(run({"--socket", "/nonexistent/admin.sock", "import", "v1"}, out, err, tty, 1),
            exit_failure);
  EXPECT_NE(err.str().find("standard input, which is a terminal"), std::string::npos) << err.str();
  ::close(tty);
  ::close(master);
}

TEST(berthctl_cli, a_copy_shows_its_source_and_its_consistency) {
  volume_record busy;
  busy.name = "s1";
  busy.kind = record_kind::snapshot;
  busy.source = volume_source("v1");
  busy.consistency = copy_crash_consistent;
  busy.created_at = "2026-12-05T08:00:00Z";
  auto idle = busy;
  idle.name = "s2";
  idle.consistency.clear();
  auto other = idle;
  other.name = "s3";
  other.source = volume_source("v2");
  auto table = format_snapshots({busy, idle, other}, "v1");
  EXPECT_NE(table.find("CONSISTENCY"), std::string::npos) << table;
  EXPECT_NE(table.find("crash-consistent"), std::string::npos) << table;
  EXPECT_NE(table.find("s2     v1       local     -      consistent   "), std::string::npos)
    << table;
  EXPECT_EQ(table.find("s3"), std::string::npos) << "only v1's snapshots: " << table;
  EXPECT_NE(format_record(busy).find("copied from:   volume:v1 (crash-consistent)\n"),
            std::string::npos)
    << format_record(busy);
  volume_record plain;
  plain.name = "v1";
  EXPECT_EQ(format_record(plain).find("copied from"), std::string::npos);
}
