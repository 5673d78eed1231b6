#include "apps/bench/csi_burst.hpp"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

using namespace berth::bench;

namespace {

/// Parses `args`; returns the usage error, or "" (and `out` set).
std::string parse(const std::vector<std::string>& args, burst_options& out) {
  auto err = parse_burst_args(args, out);
  return err ? *err : std::string{};
}

std::string refusal(const std::vector<std::string>& args) {
  burst_options out;
  auto err = parse_burst_args(args, out);
  EXPECT_TRUE(err) << "accepted";
  return err ? *err : std::string{};
}

} // namespace

TEST(csi_burst, parses_the_options_with_defaults) {
  burst_options opt;
  ASSERT_EQ(parse({"--endpoint", "unix:///run/csi.sock", "--clients", "8"}, opt), "");
  EXPECT_EQ(opt.endpoint, "unix:///run/csi.sock");
  EXPECT_EQ(opt.clients, 8);
  EXPECT_EQ(opt.rounds, 5);
  EXPECT_EQ(opt.admin_socket, "/run/berth/admin.sock"); // berthd's default
  EXPECT_EQ(opt.prefix, "bench");
  EXPECT_EQ(opt.size_mb, 1024);
  EXPECT_EQ(opt.step_mb, 64);
  EXPECT_EQ(opt.parameter, "readAheadKB");
  EXPECT_FALSE(opt.help);
  ASSERT_EQ(parse({"--clients", "2", "--endpoint", "/tmp/csi.sock", "--rounds", "3",
                   "--admin-socket", "/tmp/admin.sock", "--prefix", "p", "--size-mb", "512",
                   "--step-mb", "32", "--parameter", "directIO"},
                  opt),
            "");
  EXPECT_EQ(opt.endpoint, "unix:///tmp/csi.sock"); // a bare path is taken as unix://
  EXPECT_EQ(opt.rounds, 3);
  EXPECT_EQ(opt.admin_socket, "/tmp/admin.sock");
  EXPECT_EQ(opt.prefix, "p");
  EXPECT_EQ(opt.size_mb, 512);
  EXPECT_EQ(opt.step_mb, 32);
  EXPECT_EQ(opt.parameter, "directIO");
  ASSERT_EQ(parse({"--help"}, opt), "");
  EXPECT_TRUE(opt.help);
}

TEST(csi_burst, refuses_bad_options_naming_them) {
  EXPECT_EQ(refusal({}), "--endpoint is required (unix:///PATH)");
  EXPECT_EQ(refusal({"--clients", "4"}), "--endpoint is required (unix:///PATH)");
  EXPECT_EQ(refusal({"--endpoint", "unix:///s"}), "csi-burst mode needs --clients");
  EXPECT_EQ(refusal({"--endpoint", "tcp://x:1", "--clients", "4"}),
            "--endpoint must be unix:///PATH, got 'tcp://x:1'");
  EXPECT_EQ(refusal({"--endpoint", "unix:///s", "--clients", "0"}),
            "--clients needs an integer from 1 to 4096, got '0'");
  EXPECT_EQ(refusal({"--endpoint", "unix:///s", "--clients", "four"}),
            "--clients needs an integer from 1 to 4096, got 'four'");
  EXPECT_EQ(refusal({"--endpoint", "unix:///s", "--clients", "4x"}),
            "--clients needs an integer from 1 to 4096, got '4x'");
  EXPECT_EQ(refusal({"--endpoint", "unix:///s", "--clients", ""}),
            "--clients needs an integer from 1 to 4096, got ''");
  EXPECT_EQ(refusal({"--endpoint", "unix:///s", "--clients", "4", "--rounds", "-1"}),
            "--rounds needs an integer from 1 to 100000, got '-1'");
  EXPECT_EQ(refusal({"--endpoint", "unix:///s", "--clients", "4", "--rounds"}),
            "--rounds needs a value");
  EXPECT_EQ(refusal({"--endpoint", "unix:///s", "--clients", "4", "--seconds", "3"}),
            "unknown option '--seconds'");
  EXPECT_EQ(refusal({"--endpoint", "unix:///s", "--clients", "4", "stray"}),
            "unexpected 'stray'");
  EXPECT_EQ(refusal({"--endpoint", "unix:///s", "--clients", "4", "--admin-socket", ""}),
            "--admin-socket must not be empty");
  EXPECT_EQ(refusal({"--endpoint", "unix:///s", "--clients", "4", "--prefix", ""}),
            "--prefix must not be empty");
  EXPECT_EQ(refusal({"--endpoint", "unix:///s", "--clients", "4", "--parameter", ""}),
            "--parameter must not be empty");
  EXPECT_EQ(refusal({"--endpoint", "unix:///s", "--clients", "4", "--size-mb", "0"}),
            "--size-mb needs an integer from 1 to 1073741824, got '0'");
}

TEST(csi_burst, each_round_asks_one_larger_size_and_one_new_value) {
  burst_options opt;
  opt.size_mb = 1024;
  opt.step_mb = 64;
  EXPECT_EQ(burst_size_bytes(opt, 0), (1024ull + 64) << 20);
  EXPECT_EQ(burst_size_bytes(opt, 2), (1024ull + 192) << 20);
  EXPECT_EQ(burst_parameter_value(0), "256");
  EXPECT_EQ(burst_parameter_value(1), "384");
  EXPECT_TRUE(burst_client_expands(0));
  EXPECT_FALSE(burst_client_expands(1));
  EXPECT_TRUE(burst_client_expands(2));
}

TEST(csi_burst, the_last_line_is_json_with_the_figures) {
  burst_options opt;
  opt.endpoint = "unix:///tmp/a \"b\".sock";
  opt.clients = 4;
  opt.rounds = 3;
  burst_result r;
  r.backend_calls = {1, 1, 2};
  r.errors = 1;
  for (double ms : {10.0, 20.0, 30.0, 2000.0}) {
    r.latency.add(ms);
  }
  r.expand.add(10.0);
  r.expand.add(2000.0);
  r.modify.add(20.0);
  r.modify.add(30.0);
  auto line = burst_json(opt, r);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  rapidjson::Document doc;
  doc.Parse(line.c_str());
  ASSERT_TRUE(doc.IsObject()) << line;
  EXPECT_STREQ(doc["mode"].GetString(), "csi-burst");
  EXPECT_STREQ(doc["endpoint"].GetString(), "unix:///tmp/a \"b\".sock");
  EXPECT_EQ(doc["clients"].GetInt(), 4);
  EXPECT_EQ(doc["rounds"].GetInt(), 3);
  EXPECT_NEAR(doc["backend_calls_per_burst"].GetDouble(), 4.0 / 3.0, 0.001);
  ASSERT_TRUE(doc["backend_calls"].IsArray());
  EXPECT_EQ(doc["backend_calls"].Size(), 3u);
  EXPECT_EQ(doc["backend_calls"][2].GetUint(), 2u);
  EXPECT_EQ(doc["errors"].GetUint(), 1u);
  EXPECT_EQ(doc["calls_ok"].GetUint(), 4u);
  EXPECT_DOUBLE_EQ(doc["p50_ms"].GetDouble(), 20.0);
  EXPECT_DOUBLE_EQ(doc["p99_ms"].GetDouble(), 2000.0);
  EXPECT_DOUBLE_EQ(doc["max_ms"].GetDouble(), 2000.0);
  EXPECT_DOUBLE_EQ(doc["expand_p99_ms"].GetDouble(), 2000.0);
  EXPECT_DOUBLE_EQ(doc["modify_p99_ms"].GetDouble(), 30.0);
}

TEST(csi_burst, backend_calls_per_burst_is_null_when_no_round_could_be_read) {
  burst_options opt;
  opt.endpoint = "unix:///s";
  opt.clients = 2;
  opt.rounds = 1;
  burst_result r;
  r.errors = 2;
  rapidjson::Document doc;
  auto line = burst_json(opt, r);
  doc.Parse(line.c_str());
  ASSERT_TRUE(doc.IsObject()) << line;
  EXPECT_TRUE(doc["backend_calls_per_burst"].IsNull()) << line;
  EXPECT_EQ(doc["p99_ms"].GetDouble(), 0.0);
}
