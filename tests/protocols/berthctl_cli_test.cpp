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

TEST(berthctl_cli, parses_resize_and_modify) {
  auto r = parse_args({"resize", "v1", "10G", "--json"});
  ASSERT_TRUE(r) << describe(r.error());
  EXPECT_EQ(r->cmd, command::resize);
  EXPECT_EQ(r->name, "v1");
  EXPECT_EQ(r->size_bytes, 10ull << 30);
  EXPECT_TRUE(r->json);
  auto m = parse_args({"--socket", "/s", "modify", "v1", "readAheadKB=256", "note=a=b", "e="});
  ASSERT_TRUE(m) << describe(m.error());
  EXPECT_EQ(m->cmd, command::modify);
  EXPECT_EQ(m->name, "v1");
  EXPECT_EQ(m->socket, "/s");
  // Split at the first '=': a value may hold '=' and may be empty.
  EXPECT_EQ(m->parameters, (option_map{{"readAheadKB", "256"}, {"note", "a=b"}, {"e", ""}}));
  EXPECT_FALSE(m->json);
}

TEST(berthctl_cli, resize_and_modify_usage_errors) {
  EXPECT_EQ(usage_error({"resize"}), "resize needs a volume name and a size");
  EXPECT_EQ(usage_error({"resize", "v1"}), "resize needs a volume name and a size");
  EXPECT_EQ(usage_error({"resize", "v1", "1G", "2G"}), "resize takes a volume name and one size");
  EXPECT_EQ(usage_error({"resize", "v1", "1GB"}),
            "invalid size \"1GB\": give bytes, or a number with K, M, G or T (Ki, Mi, Gi, Ti: "
            "powers of 1024), e.g. 10G");
  EXPECT_EQ(usage_error({"resize", "v1", "0"}), "size \"0\" must be positive");
  EXPECT_EQ(usage_error({"modify"}), "modify needs a volume name and at least one key=value");
  EXPECT_EQ(usage_error({"modify", "v1"}), "modify needs a volume name and at least one key=value");
  EXPECT_EQ(usage_error({"modify", "v1", "readAheadKB"}), "\"readAheadKB\" is not key=value");
  EXPECT_EQ(usage_error({"modify", "v1", "a=1", "junk"}), "\"junk\" is not key=value");
  EXPECT_EQ(usage_error({"modify", "v1", "=256"}), "\"=256\" has an empty key: write key=value");
  EXPECT_EQ(usage_error({"modify", "v1", "="}), "\"=\" has an empty key: write key=value");
  EXPECT_EQ(usage_error({"modify", "v1", "a=1", "a=2"}), "key \"a\" is given twice");
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(run({"modify", "v1", "x"}, out, err), exit_usage);
  EXPECT_EQ(err.str().rfind("berthctl: \"x\" is not key=value\nusage: berthctl", 0), 0u)
    << err.str();
}

TEST(berthctl_cli, sizes_are_bytes_or_powers_of_1024) {
  struct ok_case {
    const char* text;
    uint64_t bytes;
  };
  for (auto [text, bytes] : {ok_case{"1", 1}, ok_case{"1048576", 1048576},
                             ok_case{"1K", 1024}, ok_case{"1Ki", 1024},
                             ok_case{"3M", 3ull << 20}, ok_case{"3Mi", 3ull << 20},
                             ok_case{"10G", 10ull << 30}, ok_case{"10Gi", 10ull << 30},
                             ok_case{"2T", 2ull << 40}, ok_case{"2Ti", 2ull << 40},
                             ok_case{"007", 7},
                             ok_case{"16777215T", 16777215ull << 40},
                             ok_case{"18446744073709551615", UINT64_MAX}}) {
    auto got = parse_size(text);
    ASSERT_TRUE(got) << text << ": " << describe(got.error());
    EXPECT_EQ(*got, bytes) << text;
  }
  auto invalid = [](const std::string& text) {
    return "invalid size \"" + text + "\": give bytes, or a number with K, M, G or T (Ki, Mi, "
           "Gi, Ti: powers of 1024), e.g. 10G";
  };
  for (std::string text : {"", "G", "Gi", "1k", "1g", "1KB", "1KiB", "1B", "1P", "1i", "1.5G",
                           "1 G", " 1", "1G ", "+1", "-1", "0x10", "1e9", "1Gi2", "1GG"}) {
    auto got = parse_size(text);
    ASSERT_FALSE(got) << text;
    EXPECT_EQ(describe(got.error()), invalid(text));
  }
  for (std::string text : {"0", "0G", "000Ti"}) {
    auto got = parse_size(text);
    ASSERT_FALSE(got) << text;
    EXPECT_EQ(describe(got.error()), "size \"" + text + "\" must be positive");
  }
  for (std::string text : {"18446744073709551616", "99999999999999999999999", "16777216T",
                           "17179869184G"}) {
    auto got = parse_size(text);
    ASSERT_FALSE(got) << text;
    EXPECT_EQ(describe(got.error()),
              "size \"" + text + "\" is too large: at most 18446744073709551615 bytes");
  }
}

TEST(berthctl_cli, formats_sizes_and_changes) {
  EXPECT_EQ(format_size(0), "-");
  EXPECT_EQ(format_size(512), "512 bytes");
  EXPECT_EQ(format_size(1024), "1 KiB (1024 bytes)");
  EXPECT_EQ(format_size(1536), "1.5 KiB (1536 bytes)");
  EXPECT_EQ(format_size(300ull << 20), "300 MiB (314572800 bytes)");
  EXPECT_EQ(format_size(1ull << 40), "1 TiB (1099511627776 bytes)");
  volume_record rec;
  rec.name = "pv1";
  rec.capacity_bytes = 2ull << 30;
  rec.mutable_parameters = {{"readAheadKB", "256"}};
  rec.modifications = 4;
  EXPECT_EQ(format_change(rec, command::resize),
            "volume pv1 resized: size 2 GiB (2147483648 bytes); mutable parameters "
            "readAheadKB=256; modifications 4\n");
  EXPECT_EQ(format_change(rec, command::modify),
            "volume pv1 modified: size 2 GiB (2147483648 bytes); mutable parameters "
            "readAheadKB=256; modifications 4\n");
  auto text = format_record(rec);
  EXPECT_NE(text.find("size:          2 GiB (2147483648 bytes)\n"
                      "mutable:       readAheadKB=256\n"
                      "modifications: 4\n"),
            std::string::npos)
    << text;
}

TEST(berthctl_cli, usage_names_resize_and_modify) {
  auto text = usage();
  EXPECT_NE(text.find("resize NAME SIZE"), std::string::npos);
  EXPECT_NE(text.find("modify NAME KEY=VALUE..."), std::string::npos);
}
