// berthctl --json when a command fails: one line on stderr, {"error":{"code","message"}},
// the code berthd's (from core/errors.hpp) or berthctl's own (unreachable, no_answer,
// usage, bad_answer), nothing on stdout, and the exit codes of the text mode.

#include <sstream>
#include <string>
#include <utility>

#include <rapidjson/document.h>

#include <gtest/gtest.h>

#include "apps/berthctl/berthctl_cli.hpp"
#include "tests/apps/berthctl/fake_admin.hpp"

using namespace berth;
using namespace berth::cli;

namespace {

/// An HTTP answer of the admin API: `status` with a JSON `body`.
std::string answer(unsigned status, const std::string& body) {
  return "HTTP/1.1 " + std::to_string(status) + " X\r\nContent-Type: application/json\r\n"
         + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

/// What berthctl printed on stderr, read as the error object --json promises: the code and
/// the message, or "not the error object: ..." naming what it was.
std::pair<std::string, std::string> error_of(const std::string& printed) {
  if (printed.empty() || printed.back() != '\n'
      || printed.find('\n') != printed.size() - 1) {
    return {"not one line: " + printed, ""};
  }
  rapidjson::Document doc;
  doc.Parse(printed.c_str(), printed.size());
  if (doc.HasParseError() || !doc.IsObject() || doc.MemberCount() != 1
      || !doc.HasMember("error") || !doc["error"].IsObject()) {
    return {"not the error object: " + printed, ""};
  }
  const auto& e = doc["error"];
  if (e.MemberCount() != 2 || !e.HasMember("code") || !e["code"].IsString()
      || !e.HasMember("message") || !e["message"].IsString()) {
    return {"not a code and a message: " + printed, ""};
  }
  return {e["code"].GetString(), e["message"].GetString()};
}

struct outcome {
  int exit;
  std::string out;
  std::string err;
};

outcome run_ctl(const std::vector<std::string>& args) {
  std::ostringstream out;
  std::ostringstream err;
  int exit = run(args, out, err);
  return {exit, out.str(), err.str()};
}

} // namespace

TEST(berthctl_json_errors, an_unknown_volume_is_not_found_with_berthds_message) {
  test::fake_admin berthd{answer(404, R"({"error":"no volume named \"gamma\""})")};
  auto r = run_ctl({"--socket", berthd.path(), "inspect", "gamma", "--json"});
  EXPECT_EQ(r.exit, exit_failure);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, R"({"error":{"code":"not_found","message":"no volume named \"gamma\""}})"
                   "\n");
}

TEST(berthctl_json_errors, berthds_refusals_keep_berths_codes) {
  for (const auto& [status, code] : std::vector<std::pair<unsigned, std::string>>{
         {400, "invalid_argument"},
         {409, "failed_precondition"},
         {429, "resource_exhausted"},
         {503, "unavailable"},
         {504, "timeout"}, // berthd's backend call timed out: not berthctl's no_answer
         {500, "internal"}}) {
    test::fake_admin berthd{answer(status, R"({"error":"refused"})")};
    auto r = run_ctl({"--socket", berthd.path(), "--json", "resize", "v1", "1G"});
    EXPECT_EQ(r.exit, exit_failure) << status;
    EXPECT_EQ(r.out, "") << status;
    EXPECT_EQ(error_of(r.err), std::make_pair(code, std::string{"refused"})) << status;
  }
}

TEST(berthctl_json_errors, an_unreachable_socket_is_unreachable_for_every_command) {
  for (const char* cmd : {"volumes", "status", "top"}) {
    auto r = run_ctl({"--socket", "/nonexistent/berth.sock", cmd, "--json"});
    EXPECT_EQ(r.exit, exit_failure) << cmd;
    EXPECT_EQ(r.out, "") << cmd;
    EXPECT_EQ(error_of(r.err),
              std::make_pair(std::string{"unreachable"},
                             unreachable_message("/nonexistent/berth.sock", ENOENT, "")))
      << cmd;
  }
}

TEST(berthctl_json_errors, a_silent_berthd_is_no_answer_at_the_timeout) {
  test::fake_admin wedged;
  auto r = run_ctl({"--socket", wedged.path(), "--timeout", "0.1", "--json", "status"});
  EXPECT_EQ(r.exit, exit_failure);
  EXPECT_EQ(r.out, "");
  auto [code, message] = error_of(r.err);
  EXPECT_EQ(code, "no_answer");
  EXPECT_EQ(message, wedged.path() + " did not answer in 0.1 s (is berthd stopped or wedged?)");
}

TEST(berthctl_json_errors, a_bad_argument_is_usage_without_the_help_text) {
  for (const auto& [args, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
         {{"inspect", "--json"}, "inspect needs a volume name"},
         {{"--json", "frobnicate"}, "unknown command \"frobnicate\""},
         {{"--json", "--timeout", "abc", "status"},
          "invalid --timeout \"abc\": give seconds, e.g. 1 or 0.5"},
         {{"resize", "v1", "1GB", "--json"},
          "invalid size \"1GB\": give bytes, or a number with K, M, G or T (Ki, Mi, Gi, Ti: "
          "powers of 1024), e.g. 10G"}}) {
    auto r = run_ctl(args);
    EXPECT_EQ(r.exit, exit_usage) << message;
    EXPECT_EQ(r.out, "") << message;
    EXPECT_EQ(error_of(r.err), std::make_pair(std::string{"usage"}, message));
  }
}

TEST(berthctl_json_errors, an_unreadable_answer_is_bad_answer) {
  test::fake_admin berthd{answer(200, "not json")};
  auto r = run_ctl({"--socket", berthd.path(), "--json", "top", "--interval", "0.1"});
  EXPECT_EQ(r.exit, exit_failure);
  EXPECT_EQ(r.out, "");
  auto [code, message] = error_of(r.err);
  EXPECT_EQ(code, "bad_answer");
  EXPECT_EQ(message.rfind("berthd sent an unreadable /v1/operations answer: ", 0), 0u)
    << message;
}

TEST(berthctl_json_errors, without_json_a_failure_stays_one_line_of_text) {
  test::fake_admin berthd{answer(404, R"({"error":"no volume named \"gamma\""})")};
  auto r = run_ctl({"--socket", berthd.path(), "inspect", "gamma"});
  EXPECT_EQ(r.exit, exit_failure);
  EXPECT_EQ(r.err, "berthctl: no volume named \"gamma\"\n");
}
