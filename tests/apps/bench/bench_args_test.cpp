// Every mode and flag of berth-bench (apps/bench/bench_args.cpp): defaults, a bad value
// refused naming the flag and the value, and --help listing every flag it parses.
#include "apps/bench/bench_args.hpp"

#include <gtest/gtest.h>

using namespace berth::bench;

namespace {

std::string refusal(const std::vector<std::string>& args) {
  bench_args out;
  auto err = parse_bench_args(args, out);
  EXPECT_TRUE(err) << "accepted";
  return err ? *err : std::string{};
}

bench_args accepted(const std::vector<std::string>& args) {
  bench_args out;
  auto err = parse_bench_args(args, out);
  EXPECT_FALSE(err) << *err;
  return out;
}

} // namespace

TEST(bench_args, docker_defaults_and_every_flag) {
  auto a = accepted({"docker", "--socket", "/p.sock", "--volumes", "3", "--concurrency", "2",
                     "--seconds", "0.5"});
  EXPECT_EQ(a.mode, "docker");
  EXPECT_EQ(a.common.mode, "docker");
  EXPECT_EQ(a.common.socket, "/p.sock");
  EXPECT_EQ(a.common.volumes, 3);
  EXPECT_EQ(a.common.concurrency, 2);
  EXPECT_EQ(a.common.seconds, 0.5);
  EXPECT_EQ(a.common.pid, 0);
  EXPECT_EQ(a.common.prefix, "bench");
  EXPECT_EQ(a.common.stalled, "");
  a = accepted({"docker", "--socket=/p", "--volumes=1", "--concurrency=1", "--seconds=1",
                "--pid", "42", "--prefix", "x", "--stalled", "slow"});
  EXPECT_EQ(a.common.pid, 42);
  EXPECT_EQ(a.common.prefix, "x");
  EXPECT_EQ(a.common.stalled, "slow");
  EXPECT_EQ(a.common.docker.report_every, 0.0) << "no periodic report unless asked";
  EXPECT_FALSE(a.common.docker.mixed);
  a = accepted({"docker", "--socket=/p", "--volumes=1", "--concurrency=1", "--seconds=1",
                "--report-every", "60", "--state-dir", "/s", "--mixed"});
  EXPECT_EQ(a.common.docker.report_every, 60.0);
  EXPECT_EQ(a.common.state_dir, "/s");
  EXPECT_TRUE(a.common.docker.mixed);
}

TEST(bench_args, restart_defaults_and_every_flag) {
  auto a = accepted({"restart", "--berthd", "/b", "--state-dir", "/s", "--socket", "/p",
                     "--volumes", "4", "--ids-per-volume", "0"});
  EXPECT_EQ(a.mode, "restart");
  EXPECT_EQ(a.common.berthd, "/b");
  EXPECT_EQ(a.common.state_dir, "/s");
  EXPECT_EQ(a.common.volumes, 4);
  EXPECT_EQ(a.common.ids_per_volume, 0);
  EXPECT_EQ(a.common.concurrency, 16);
  EXPECT_EQ(a.common.prefix, "bench");
  EXPECT_FALSE(a.common.keep);
  EXPECT_TRUE(a.common.berthd_args.empty());
  // A flag's value is the next argument, even one that starts with --.
  a = accepted({"restart", "--berthd", "/b", "--state-dir", "/s", "--socket", "/p", "--volumes",
                "4", "--ids-per-volume", "2", "--concurrency", "3", "--prefix", "r", "--keep",
                "--berthd-arg", "--metrics-address=127.0.0.1:0", "--berthd-arg", "--log-level",
                "--berthd-arg", "debug"});
  EXPECT_EQ(a.common.concurrency, 3);
  EXPECT_EQ(a.common.prefix, "r");
  EXPECT_TRUE(a.common.keep);
  EXPECT_EQ(a.common.berthd_args,
            (std::vector<std::string>{"--metrics-address=127.0.0.1:0", "--log-level", "debug"}));
}

TEST(bench_args, csi_defaults_and_every_flag) {
  auto a = accepted({"csi", "--endpoint", "/c.sock", "--concurrency", "2", "--seconds", "1"});
  EXPECT_EQ(a.mode, "csi");
  EXPECT_EQ(a.csi.endpoint, "unix:///c.sock");
  EXPECT_EQ(a.csi.node_endpoint, "unix:///c.sock"); // the Node calls go to the same socket
  EXPECT_EQ(a.csi.concurrency, 2);
  EXPECT_EQ(a.csi.seconds, 1);
  EXPECT_EQ(a.csi.pid, 0);
  EXPECT_EQ(a.csi.prefix, "bench");
  EXPECT_EQ(a.csi.backend, "");
  EXPECT_EQ(a.csi.work_dir, "/tmp");
  a = accepted({"csi", "--endpoint", "unix:///c", "--concurrency", "1", "--seconds", "2",
                "--pid", "7", "--prefix", "q", "--backend", "dir", "--work-dir", "/w"});
  EXPECT_EQ(a.csi.pid, 7);
  EXPECT_EQ(a.csi.prefix, "q");
  EXPECT_EQ(a.csi.backend, "dir");
  EXPECT_EQ(a.csi.work_dir, "/w");
  a = accepted({"csi", "--endpoint", "/ctl.sock", "--node-endpoint", "/n1.sock", "--concurrency",
                "1", "--seconds", "2"});
  EXPECT_EQ(a.csi.endpoint, "unix:///ctl.sock");
  EXPECT_EQ(a.csi.node_endpoint, "unix:///n1.sock");
}

TEST(bench_args, csi_list_defaults_and_every_flag) {
  auto a = accepted({"csi-list", "--endpoint", "/c.sock", "--volumes", "10000"});
  EXPECT_EQ(a.mode, "csi-list");
  EXPECT_EQ(a.list.endpoint, "unix:///c.sock");
  EXPECT_EQ(a.list.volumes, 10000);
  EXPECT_EQ(a.list.lists, 100);
  EXPECT_EQ(a.list.concurrency, 16);
  EXPECT_EQ(a.list.backend, "local");
  EXPECT_EQ(a.list.prefix, "bench");
  EXPECT_EQ(a.list.pid, 0);
  a = accepted({"csi-list", "--endpoint", "unix:///c", "--volumes", "5", "--lists", "3",
                "--concurrency", "2", "--backend", "block", "--prefix", "q", "--pid", "7"});
  EXPECT_EQ(a.list.lists, 3);
  EXPECT_EQ(a.list.concurrency, 2);
  EXPECT_EQ(a.list.backend, "block");
  EXPECT_EQ(a.list.prefix, "q");
  EXPECT_EQ(a.list.pid, 7);
  EXPECT_EQ(refusal({"csi-list", "--endpoint", "/c"}), "csi-list mode needs --volumes");
  EXPECT_EQ(refusal({"csi-list", "--endpoint", "/c", "--volumes", "0"}),
            "--volumes needs an integer from 1 to 1000000, got '0'");
  EXPECT_EQ(refusal({"csi-list", "--endpoint", "/c", "--volumes", "1", "--backend", ""}),
            "--prefix and --backend must not be empty");
}

TEST(bench_args, io_defaults_and_every_flag) {
  auto a = accepted({"io", "--endpoint", "/c.sock", "--host-dir", "/h"});
  EXPECT_EQ(a.mode, "io");
  EXPECT_EQ(a.io.endpoint, "unix:///c.sock");
  EXPECT_EQ(a.io.socket, "");
  EXPECT_EQ(a.io.host_dir, "/h");
  EXPECT_EQ(a.io.work_dir, "/tmp");
  EXPECT_EQ(a.io.fs_type, "xfs");
  EXPECT_EQ(a.io.size_mb, 4096);
  EXPECT_EQ(a.io.runtime, 10);
  EXPECT_EQ(a.io.rounds, 3);
  EXPECT_TRUE(a.io.jobs.empty()) << "every job";
  EXPECT_EQ(a.io.fio, "fio");
  a = accepted({"io", "--socket", "/d.sock", "--host-dir", "/h", "--work-dir", "/w", "--fs",
                "ext4", "--size-mb", "2048", "--runtime", "2.5", "--rounds", "5", "--job",
                "fsync", "--job", "cache", "--fio", "/opt/fio", "--prefix", "q"});
  EXPECT_EQ(a.io.endpoint, "");
  EXPECT_EQ(a.io.socket, "/d.sock");
  EXPECT_EQ(a.io.work_dir, "/w");
  EXPECT_EQ(a.io.fs_type, "ext4");
  EXPECT_EQ(a.io.size_mb, 2048);
  EXPECT_EQ(a.io.runtime, 2.5);
  EXPECT_EQ(a.io.rounds, 5);
  EXPECT_EQ(a.io.jobs, (std::vector<std::string>{"fsync", "cache"}));
  EXPECT_EQ(a.io.fio, "/opt/fio");
  EXPECT_EQ(a.io.prefix, "q");
  EXPECT_EQ(refusal({"io", "--host-dir", "/h"}), "io mode needs --endpoint, --socket or both");
  EXPECT_EQ(refusal({"io", "--socket", "/d"}), "io mode needs --host-dir");
  EXPECT_EQ(refusal({"io", "--socket", "/d", "--host-dir", "/h", "--fs", "btrfs"}),
            "--fs takes xfs or ext4, got 'btrfs'");
  EXPECT_EQ(refusal({"io", "--socket", "/d", "--host-dir", "/h", "--job", "fsync", "--job",
                     "mix"}),
            "--job takes fsync, fsync-over, seqw, seqr, randw, randr, cache or dio, got 'mix'");
  EXPECT_EQ(refusal({"io", "--socket", "/d", "--host-dir", "/h", "--size-mb", "1024"}),
            "--size-mb needs an integer from 1536 to 1073741824, got '1024'");
}

TEST(bench_args, a_bad_value_is_refused_naming_the_flag_and_the_value) {
  const std::vector<std::string> docker{"docker", "--socket", "/p", "--volumes", "1",
                                        "--concurrency", "1", "--seconds", "1"};
  struct bad {
    std::vector<std::string> base;
    std::string flag, value, message;
  };
  for (const auto& b : std::vector<bad>{
         {docker, "--volumes", "0", "--volumes needs an integer >= 1, got '0'"},
         {docker, "--concurrency", "x", "--concurrency needs an integer >= 1, got 'x'"},
         {docker, "--seconds", "0", "--seconds needs a positive number, got '0'"},
         {docker, "--pid", "-3", "--pid needs an integer >= 1, got '-3'"},
         {docker, "--report-every", "0", "--report-every needs a positive number, got '0'"},
         {docker, "--prefix", "", "--prefix must not be empty"},
         {docker, "--socket", "", "--socket is required"},
         {{"restart", "--berthd", "/b", "--state-dir", "/s", "--socket", "/p", "--volumes", "1"},
          "--ids-per-volume", "-1", "--ids-per-volume needs an integer >= 0, got '-1'"},
         {{"csi", "--concurrency", "1", "--seconds", "1"}, "--endpoint", "tcp://x:1",
          "--endpoint must be unix:///PATH, got 'tcp://x:1'"},
         {{"csi", "--endpoint", "/c", "--concurrency", "1", "--seconds", "1"}, "--node-endpoint",
          "n.sock", "--node-endpoint must be unix:///PATH, got 'n.sock'"},
         {{"csi", "--endpoint", "/c", "--seconds", "1"}, "--concurrency", "0",
          "--concurrency needs an integer >= 1, got '0'"},
         {{"csi", "--endpoint", "/c", "--concurrency", "1"}, "--seconds", "-1",
          "--seconds needs a positive number, got '-1'"},
         {{"csi-burst", "--endpoint", "/c", "--clients", "1"}, "--step-mb", "1048577",
          "--step-mb needs an integer from 1 to 1048576, got '1048577'"}}) {
    auto args = b.base;
    args.push_back(b.flag);
    args.push_back(b.value);
    EXPECT_EQ(refusal(args), b.message) << b.flag;
  }
}

TEST(bench_args, modes_and_usage_errors_are_named) {
  EXPECT_EQ(refusal({}), "missing mode (docker, restart, csi, csi-list, csi-burst or io)");
  EXPECT_EQ(refusal({"fly"}), "unknown mode 'fly'");
  EXPECT_EQ(refusal({"docker", "--volumes", "1"}), "--socket is required");
  EXPECT_EQ(refusal({"docker", "--socket", "/p", "--volumes", "1"}),
            "docker mode needs --volumes, --concurrency and --seconds");
  EXPECT_EQ(refusal({"restart", "--socket", "/p"}),
            "restart mode needs --berthd, --state-dir, --volumes and --ids-per-volume");
  EXPECT_EQ(refusal({"csi", "--endpoint", "/c"}), "csi mode needs --concurrency and --seconds");
  EXPECT_EQ(refusal({"csi"}), "--endpoint is required (unix:///PATH)");
  // Each mode takes the flags its help lists, and no other's.
  EXPECT_EQ(refusal({"restart", "--seconds", "1"}), "unknown option '--seconds'");
  EXPECT_EQ(refusal({"csi", "--keep"}), "unknown option '--keep'");
  EXPECT_EQ(refusal({"docker", "--socket"}), "--socket needs a value");
  EXPECT_EQ(refusal({"docker", "stray"}), "unexpected 'stray'");
}

TEST(bench_args, help_and_version_need_no_mode) {
  for (const auto& args : std::vector<std::vector<std::string>>{
         {"--help"}, {"-h"}, {"help"}, {"csi", "--help"}}) {
    auto a = accepted(args);
    EXPECT_TRUE(a.help) << args[0];
  }
  EXPECT_TRUE(accepted({"--version"}).version);
}

TEST(bench_args, help_lists_every_mode_and_flag_it_parses) {
  auto help = bench_usage();
  for (const char* item : {"docker",
                           "restart",
                           "csi-burst",
                           "csi-list",
                           "--lists L",
                           "--socket PATH",
                           "--volumes N",
                           "--concurrency C",
                           "--seconds S",
                           "--pid PID",
                           "--prefix P",
                           "--stalled NAME",
                           "--berthd PATH",
                           "--report-every SECONDS",
                           "--mixed",
                           "--state-dir DIR",
                           "--ids-per-volume K",
                           "--keep",
                           "--berthd-arg ARG",
                           "--endpoint unix:///PATH",
                           "--node-endpoint unix:///PATH",
                           "--backend NAME",
                           "--work-dir DIR",
                           "--clients K",
                           "--rounds R",
                           "--admin-socket PATH",
                           "--size-mb N",
                           "--step-mb N",
                           "--parameter KEY",
                           "-h,--help",
                           "--version",
                           "(default 16)",
                           "(default /tmp)",
                           "(default 1024)",
                           "(default 64)",
                           "(default 5)",
                           "(default readAheadKB)",
                           "(default /run/berth/admin.sock)",
                           "--host-dir DIR",
                           "--fs TYPE",
                           "--runtime S",
                           "--job NAME",
                           "--fio PATH",
                           "io",
                           "The last line of the output is one JSON object."}) {
    EXPECT_NE(help.find(item), std::string::npos) << item << "\n" << help;
  }
}
