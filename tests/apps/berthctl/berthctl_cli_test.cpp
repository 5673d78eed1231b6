#include "apps/berthctl/berthctl_cli.hpp"

#include <cerrno>
#include <cstdio>
#include <sstream>

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

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
}

TEST(berthctl_cli, says_berthd_is_not_running_when_there_is_no_socket) {
  // top reaches the socket only with --json (or a terminal): its case, as JSON, is in
  // berthctl_json_errors_test.cpp.
  std::ostringstream out;
  for (auto* cmd : {"volumes", "status"}) {
    std::ostringstream err;
    EXPECT_EQ(run({"--socket", "/nonexistent/berth.sock", cmd}, out, err), exit_failure);
    EXPECT_EQ(err.str(), "berthctl: berthd is not running: there is no socket at "
                         "/nonexistent/berth.sock. Start it (systemctl start berthd), or give "
                         "the socket it listens on (berthd --admin-socket) with --socket PATH.\n")
      << cmd;
  }
}

TEST(berthctl_cli, says_berthd_is_not_running_when_nobody_accepts_on_the_socket) {
  // A socket file that nobody listens on: what a berthd killed with SIGKILL leaves.
  char dir_template[] = "/tmp/berthctl-test.XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  std::string path = std::string{dir_template} + "/admin.sock";
  int fd = ::socket(AF_UNIX, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path.c_str());
  ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ::close(fd);
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(run({"--socket", path, "status"}, out, err), exit_failure);
  EXPECT_EQ(err.str(), "berthctl: berthd is not running: nothing accepts connections on " + path
                         + " (the socket of a berthd that stopped?). Start it (systemctl start "
                           "berthd), or give the socket it listens on (berthd --admin-socket) "
                           "with --socket PATH.\n");
  ::unlink(path.c_str());
  ::rmdir(dir_template);
}

TEST(berthctl_cli, unreachable_messages_name_the_socket_and_what_to_do) {
  const std::string sock = "/run/berth/admin.sock";
  auto missing = unreachable_message(sock, ENOENT, "x");
  EXPECT_EQ(missing, "berthd is not running: there is no socket at /run/berth/admin.sock. Start "
                     "it (systemctl start berthd), or give the socket it listens on (berthd "
                     "--admin-socket) with --socket PATH.");
  EXPECT_EQ(unreachable_message(sock, ENOTDIR, "x"), missing);
  EXPECT_EQ(unreachable_message(sock, ECONNREFUSED, "x"),
            "berthd is not running: nothing accepts connections on /run/berth/admin.sock (the "
            "socket of a berthd that stopped?). Start it (systemctl start berthd), or give the "
            "socket it listens on (berthd --admin-socket) with --socket PATH.");
  auto denied = unreachable_message(sock, EACCES, "x");
  EXPECT_EQ(denied, "permission denied on /run/berth/admin.sock: berthd's admin socket is for "
                    "root and its group (mode 0660). Run berthctl as root (sudo berthctl ...), "
                    "or give a socket you may use with --socket PATH.");
  EXPECT_EQ(unreachable_message(sock, EPERM, "x"), denied);
  // Connected, then the exchange failed; or another connect error: the client's words.
  EXPECT_EQ(unreachable_message(sock, 0, "/run/berth/admin.sock: read: end of stream"),
            "cannot reach berthd at /run/berth/admin.sock: read: end of stream");
  EXPECT_EQ(unreachable_message(sock, EAGAIN, "/run/berth/admin.sock: connect: busy"),
            "cannot reach berthd at /run/berth/admin.sock: connect: busy");
}

TEST(berthctl_cli, top_without_a_terminal_says_so_unless_json) {
  if (::isatty(STDIN_FILENO) == 1 || ::isatty(STDOUT_FILENO) == 1) {
    GTEST_SKIP() << "standard input or output is a terminal here; the refusal needs neither";
  }
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(run({"--socket", "/nonexistent/berth.sock", "top"}, out, err), exit_failure);
  EXPECT_EQ(err.str(), "berthctl: top needs a terminal, and its standard input and output are "
                       "not one. Run it in a terminal, or use `berthctl top --json` for one "
                       "sample of the view.\n");
}

TEST(berthctl_cli, parses_status_top_and_the_interval) {
  auto st = parse_args({"status", "--json"});
  ASSERT_TRUE(st);
  EXPECT_EQ(st->cmd, command::status);
  EXPECT_TRUE(st->json);
  auto top = parse_args({"top"});
  ASSERT_TRUE(top);
  EXPECT_EQ(top->cmd, command::top);
  EXPECT_EQ(top->interval, std::chrono::milliseconds(1000));
  auto fast = parse_args({"top", "--interval", "0.25"});
  ASSERT_TRUE(fast) << describe(fast.error());
  EXPECT_EQ(fast->interval, std::chrono::milliseconds(250));
  auto eq = parse_args({"--interval=2", "top", "--json"});
  ASSERT_TRUE(eq) << describe(eq.error());
  EXPECT_EQ(eq->interval, std::chrono::milliseconds(2000));
  EXPECT_TRUE(eq->json);
  EXPECT_EQ(usage_error({"status", "x"}), "status takes no arguments, got \"x\"");
  EXPECT_EQ(usage_error({"top", "x"}), "top takes no arguments, got \"x\"");
  EXPECT_EQ(usage_error({"volumes", "--interval", "2"}), "--interval is an option of top only");
  EXPECT_EQ(usage_error({"top", "--interval"}),
            "--interval needs a number of seconds, e.g. --interval 2");
  EXPECT_EQ(usage_error({"--socket", std::string(108, 'a'), "status"}),
            "--socket path \"" + std::string(60, 'a') + "...\" is 108 bytes; a unix socket path "
            "has at most 107");
}

TEST(berthctl_cli, intervals_are_seconds_within_bounds) {
  EXPECT_EQ(*parse_interval("1"), std::chrono::milliseconds(1000));
  EXPECT_EQ(*parse_interval("0.1"), std::chrono::milliseconds(100));
  EXPECT_EQ(*parse_interval("3600"), std::chrono::milliseconds(3600000));
  EXPECT_EQ(*parse_interval("1.5"), std::chrono::milliseconds(1500));
  for (std::string text : {"", "x", "1s", "-1", "+1", "1e3", "inf", "nan", " 1", "0x10", "1..2"}) {
    auto got = parse_interval(text);
    ASSERT_FALSE(got) << text;
    EXPECT_EQ(describe(got.error()),
              "invalid --interval \"" + text + "\": give seconds, e.g. 1 or 0.5");
  }
  for (std::string text : {"0", "0.05", "0.099", "3600.5", "99999"}) {
    auto got = parse_interval(text);
    ASSERT_FALSE(got) << text;
    EXPECT_EQ(describe(got.error()),
              "invalid --interval \"" + text + "\": give between 0.1 and 3600 seconds");
  }
}

TEST(berthctl_cli, version_json) {
  std::ostringstream out;
  std::ostringstream err;
  EXPECT_EQ(run({"--version", "--json"}, out, err), exit_ok);
  EXPECT_EQ(out.str(), std::string{R"({"berthctl":")"} + BERTH_VERSION + "\"}\n");
}

TEST(berthctl_cli, formats_a_table_with_short_ids) {
  volume_record a;
  a.name = "data";
  a.backend = "block";
  a.owner = record_owner::docker;
  a.mounts = {{"c89a0f0e1d2c3b4a5968", 2}, {"ffff", 1}};
  a.mounted = true;
  a.mountpoint = "/var/lib/berth/mnt/data";
  // The IDs cut as logs show them (core/text.hpp's short_id), the "…" one column wide.
  EXPECT_EQ(format_table({a}),
            "NAME   OWNER    KIND     BACKEND   SIZE   USED   ALLOCATED   MOUNTED   HEALTH   MOUNT "
            "IDS                PATH\n"
            "data   docker   volume   block     -      -      -           yes       -        "
            "c89a0f0e1d2c…:2,ffff:1   /var/lib/berth/mnt/data\n");
  a.capacity_bytes = 64ull << 20;
  volume_figures measured;
  measured.used = 12ull << 20;
  measured.allocated = 20ull << 20;
  measured.healthy = true;
  EXPECT_EQ(format_table({a}, {{"data", measured}, {"other", volume_figures{}}}),
            "NAME   OWNER    KIND     BACKEND   SIZE   USED   ALLOCATED   MOUNTED   HEALTH   MOUNT "
            "IDS                PATH\n"
            "data   docker   volume   block     64M    12M    20M         yes       ok       "
            "c89a0f0e1d2c…:2,ffff:1   /var/lib/berth/mnt/data\n");
  measured.healthy = false;
  measured.conditions = {{"image_short", "short"}, {"mount_gone", "gone"}};
  EXPECT_NE(format_table({a}, {{"data", measured}}).find("   image_short,mount_gone   "),
            std::string::npos)
    << format_table({a}, {{"data", measured}});
  EXPECT_EQ(format_table({}),
            "NAME   OWNER   KIND   BACKEND   SIZE   USED   ALLOCATED   MOUNTED   HEALTH   MOUNT "
            "IDS   PATH\n");
}

TEST(berthctl_cli, reads_the_figures_of_records) {
  volume_figures a;
  a.used = 4096;
  a.allocated = 8192;
  a.direct_io = true;
  EXPECT_EQ(
    figures_of(
      R"([{"name":"a","used_bytes":4096,"allocated_bytes":8192,"direct_io":true},{"name":"b"}])"),
    (figures_map{{"a", a}}));
  volume_figures used_only;
  used_only.used = 7;
  EXPECT_EQ(figures_of(R"({"name":"a","used_bytes":7})"), (figures_map{{"a", used_only}}));
  // A figure of the wrong type is not a figure.
  EXPECT_EQ(figures_of(R"({"name":"a","used_bytes":"7","direct_io":1})"), figures_map{});
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
                      "modifications: 4\n"
                      "used:          - (measured while a block volume is mounted)\n"),
            std::string::npos)
    << text;
  volume_figures f;
  f.used = 3ull << 29;
  text = format_record(rec, {{"pv1", f}});
  EXPECT_NE(text.find("used:          1.5 GiB (1610612736 bytes)\n"), std::string::npos) << text;
}

TEST(berthctl_cli, inspect_shows_a_block_volumes_allocation_and_direct_io) {
  volume_record rec;
  rec.name = "db";
  rec.backend = "block";
  rec.capacity_bytes = 1ull << 30;
  auto text = format_record(rec);
  EXPECT_NE(text.find("allocated:     - (measured while a block volume is mounted)\n"
                      "direct I/O:    - (read while a block volume is mounted)\n"),
            std::string::npos)
    << text;
  volume_figures f;
  f.used = 1ull << 20;
  f.allocated = 3ull << 20;
  f.direct_io = true;
  text = format_record(rec, {{"db", f}});
  EXPECT_NE(text.find("allocated:     3 MiB (3145728 bytes) of the host's, for its image\n"
                      "direct I/O:    on (its pages are cached once, in its own filesystem)\n"),
            std::string::npos)
    << text;
  f.direct_io = false;
  text = format_record(rec, {{"db", f}});
  EXPECT_NE(text.find("direct I/O:    off: the host refused it"), std::string::npos) << text;
  rec.mutable_parameters = {{"directIO", "false"}};
  text = format_record(rec, {{"db", f}});
  EXPECT_NE(text.find("direct I/O:    off, as its directIO=false asks"), std::string::npos) << text;
  // A volume of the directory backend has no image and no loop device.
  rec.backend = "local";
  EXPECT_EQ(format_record(rec, {{"db", f}}).find("direct I/O:"), std::string::npos);
}

TEST(berthctl_cli, usage_names_resize_modify_status_and_top) {
  auto text = usage();
  EXPECT_NE(text.find("berthctl [--socket PATH] status [--json]"), std::string::npos);
  EXPECT_NE(text.find("berthctl [--socket PATH] top [--interval SECONDS] [--json]"),
            std::string::npos);
  EXPECT_NE(text.find("resize NAME SIZE"), std::string::npos);
  EXPECT_NE(text.find("modify NAME KEY=VALUE..."), std::string::npos);
}
