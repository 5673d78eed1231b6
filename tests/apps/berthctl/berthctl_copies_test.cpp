// berthctl's side of copies: export's and import's arguments (import --onto's too) and their
// refusal of a terminal, how a snapshot's or clone's consistency is shown, snapshot diff's
// arguments and text, and what import --onto prints (the routes themselves:
// tests/protocols/admin_snapshot_diff_test.cpp, tests/e2e/snapshot_diff_e2e.sh).

#include "apps/berthctl/berthctl_cli.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "core/limits.hpp"

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

TEST(berthctl_cli, import_onto_names_the_volume_and_takes_no_name_or_option_of_its_own) {
  auto onto = parse_args({"import", "--onto", "restored"});
  ASSERT_TRUE(onto) << describe(onto.error());
  EXPECT_EQ(onto->cmd, command::import_volume);
  EXPECT_EQ(onto->name, "restored");
  EXPECT_EQ(onto->onto, "restored");
  for (const auto& bad :
       {std::vector<std::string>{"import", "v2", "--onto", "restored"},
        std::vector<std::string>{"import", "--onto", "restored", "-o", "size=1G"}}) {
    auto refused = parse_args(bad);
    ASSERT_FALSE(refused) << bad[1];
    EXPECT_NE(describe(refused.error()).find("import --onto VOLUME takes no name and no -o"),
              std::string::npos)
      << describe(refused.error());
  }
  EXPECT_NE(usage().find("--onto VOLUME < FILE.delta"), std::string::npos);
  auto applied = format_delta_applied(R"({"volume":"restored","delta_of":"data","base":"mon",)"
                                      R"("ranges":3,"changed_bytes":458752})");
  ASSERT_TRUE(applied) << describe(applied.error());
  EXPECT_EQ(*applied,
            "volume restored now holds volume data as it was exported since snapshot "
            "mon: 3 ranges, 448 KiB (458752 bytes) written\n");
  EXPECT_FALSE(format_delta_applied(R"({"volume":"restored"})"));
  EXPECT_FALSE(format_delta_applied("not json"));
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
  err.str("");
  EXPECT_EQ(
    run({"--socket", "/nonexistent/admin.sock", "import", "--onto", "v1"}, out, err, tty, 1),
    exit_failure);
  EXPECT_NE(err.str().find("import --onto reads a delta from standard input, which is a "
                           "terminal; redirect it: berthctl import --onto v1 < FILE.delta"),
            std::string::npos)
    << err.str();
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

TEST(berthctl_cli, parses_snapshot_diff_with_a_longer_default_timeout) {
  auto diff = parse_args({"snapshot", "diff", "mon", "tue"});
  ASSERT_TRUE(diff) << describe(diff.error());
  EXPECT_EQ(diff->cmd, command::snapshot_diff);
  EXPECT_EQ(diff->base, "mon");
  EXPECT_EQ(diff->name, "tue");
  EXPECT_EQ(diff->timeout, limits::default_snapshot_diff_timeout);
  auto bounded = parse_args({"--timeout", "5", "snapshot", "diff", "mon", "tue"});
  ASSERT_TRUE(bounded) << describe(bounded.error());
  EXPECT_EQ(bounded->timeout, std::chrono::seconds(5));
  auto one = parse_args({"snapshot", "diff", "mon"});
  ASSERT_FALSE(one);
  EXPECT_NE(describe(one.error())
              .find("snapshot diff takes two snapshot names: the older, then "
                    "the newer"),
            std::string::npos)
    << describe(one.error());
  EXPECT_NE(usage().find("diff BASE TARGET"), std::string::npos);
}

TEST(berthctl_cli, a_diff_answer_that_is_no_diff_is_an_error) {
  EXPECT_FALSE(format_diff("[]"));
  EXPECT_FALSE(format_diff(R"({"base":"a"})"));
  auto none = format_diff(R"({"base":"a","target":"b","volume":"v","size_bytes":1048576,)"
                          R"("block_bytes":65536,"ranges":[],"changed_bytes":0,)"
                          R"("shared_blocks":3,"read_blocks":1})");
  ASSERT_TRUE(none) << describe(none.error());
  EXPECT_EQ(*none,
            "snapshot b holds the same bytes as a (volume v, 1 MiB (1048576 bytes))\n"
            "compared 4 blocks: 3 by their shared extents, 1 read\n");
}
