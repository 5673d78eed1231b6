// The admin API's resize and modify routes (and berthctl's commands for them), in
// front of the fake registry: what reaches the registry, what is refused before it,
// and how the registry's errors become HTTP statuses.

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include "core/errors.hpp"
#include "core/limits.hpp"
#include "core/record_json.hpp"
#include "protocols/http/unix_http_client.hpp"
#include "tests/protocols/admin_fixture.hpp"

using namespace berth;

namespace {

class admin_modify_test : public test::admin_fixture {
protected:
  caf::expected<http_response> post(const std::string& target, const std::string& body) {
    unix_http_client client{path};
    return client.post(target, body, "application/json");
  }

  /// POSTs `body` and expects a 400 whose message is `message`; nothing reaches the registry.
  void refused(const std::string& target, const std::string& body, const std::string& message) {
    auto res = post(target, body);
    ASSERT_TRUE(res) << describe(res.error());
    EXPECT_EQ(res->status, 400u) << body << " -> " << res->body;
    rapidjson::Document doc;
    doc.Parse(res->body.c_str());
    ASSERT_TRUE(doc.IsObject() && doc.HasMember("error")) << res->body;
    EXPECT_EQ(std::string{doc["error"].GetString()}, message) << body;
    EXPECT_TRUE(modifying->requests().empty()) << body << " reached the registry";
  }

  /// The JSON object of many parameters "p0".."p(n-1)".
  static std::string parameters(size_t n) {
    std::string out = R"({"parameters":{)";
    for (size_t i = 0; i < n; ++i) {
      out += (i == 0 ? "" : ",") + std::string{"\"p"} + std::to_string(i) + "\":\"v\"";
    }
    return out + "}}";
  }
};

} // namespace

// -- what reaches the registry --------------------------------------------------------

TEST_F(admin_modify_test, resize_sends_an_admin_modify_with_the_size_and_replies_with_the_record) {
  auto res = post("/v1/volumes/beta/resize", R"({"size_bytes": 2147483648})");
  ASSERT_TRUE(res) << describe(res.error());
  ASSERT_EQ(res->status, 200u) << res->body;
  auto rec = record_from_json(res->body);
  ASSERT_TRUE(rec) << res->body;
  EXPECT_EQ(rec->name, "beta");
  EXPECT_EQ(rec->capacity_bytes, 2147483648u);
  EXPECT_EQ(rec->modifications, 1u);
  EXPECT_EQ(rec->owner, record_owner::docker);
  auto got = modifying->requests();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].first, "beta");
  EXPECT_EQ(got[0].second.required_bytes, 2147483648u);
  EXPECT_TRUE(got[0].second.parameters.empty());
  EXPECT_EQ(got[0].second.owner, record_owner::unset); // the admin: any record
}

TEST_F(admin_modify_test, modify_sends_an_admin_modify_with_the_parameters) {
  auto res = post("/v1/volumes/alpha/modify",
                  R"({"parameters": {"readAheadKB": "256", "directIO": "on", "empty": ""}})");
  ASSERT_TRUE(res) << describe(res.error());
  ASSERT_EQ(res->status, 200u) << res->body;
  auto rec = record_from_json(res->body);
  ASSERT_TRUE(rec) << res->body;
  option_map want{{"readAheadKB", "256"}, {"directIO", "on"}, {"empty", ""}};
  EXPECT_EQ(rec->mutable_parameters, want);
  EXPECT_EQ(rec->modifications, 1u);
  auto got = modifying->requests();
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].first, "alpha");
  EXPECT_EQ(got[0].second.required_bytes, 0u); // the size does not change
  EXPECT_EQ(got[0].second.parameters, want);
  EXPECT_EQ(got[0].second.owner, record_owner::unset);
}

TEST_F(admin_modify_test, the_bounds_themselves_are_accepted) {
  auto res = post("/v1/volumes/beta/modify", parameters(limits::max_options));
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200u) << res->body;
  std::string key(limits::max_option_key_bytes, 'k');
  std::string value(limits::max_option_value_bytes, 'v');
  res = post("/v1/volumes/beta/modify",
             R"({"parameters":{")" + key + R"(":")" + value + R"("}})");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200u) << res->body.substr(0, 200);
  res = post("/v1/volumes/beta/resize", R"({"size_bytes": 18446744073709551615})");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200u) << res->body;
  EXPECT_EQ(modifying->requests().size(), 3u);
}

// -- refused before the registry: 400 naming the field ---------------------------------

TEST_F(admin_modify_test, resize_refuses_a_body_that_is_not_a_positive_integer_size) {
  const std::string t = "/v1/volumes/beta/resize";
  const std::string send = R"(: send {"size_bytes": 2147483648})";
  refused(t, "", "request body is empty" + send);
  refused(t, "2G",
          "request body is not JSON (offset 1: The document root must not be followed by other "
          "values.)" + send);
  refused(t, "{", "request body is not JSON (offset 1: Missing a name for object member.)"
                    + send);
  refused(t, "[1]", "request body must be a JSON object, got an array" + send);
  refused(t, "{}", "missing \"size_bytes\"" + send);
  refused(t, R"({"size": 1})", "unknown field \"size\"" + send);
  refused(t, R"({"size_bytes": 1, "extra": 2})", "unknown field \"extra\"" + send);
  const std::string must = "\"size_bytes\" must be a positive integer (bytes), got ";
  refused(t, R"({"size_bytes": "2G"})", must + "a string");
  refused(t, R"({"size_bytes": null})", must + "null");
  refused(t, R"({"size_bytes": true})", must + "a boolean");
  refused(t, R"({"size_bytes": [1]})", must + "an array");
  refused(t, R"({"size_bytes": 0})", must + "0");
  refused(t, R"({"size_bytes": -5})", must + "-5");
  refused(t, R"({"size_bytes": 1.5})", must + "1.5 (not an integer of at most 64 bits)");
  refused(t, R"({"size_bytes": 18446744073709551616})",
          must + "1.8446744073709552e+19 (not an integer of at most 64 bits)");
}

TEST_F(admin_modify_test, modify_refuses_parameters_that_are_not_an_object_of_strings) {
  const std::string t = "/v1/volumes/beta/modify";
  const std::string send = R"(: send {"parameters": {"readAheadKB": "256"}})";
  refused(t, " ", "request body is empty" + send);
  refused(t, "readAheadKB=256",
          "request body is not JSON (offset 0: Invalid value.)" + send);
  refused(t, R"("x")", "request body must be a JSON object, got a string" + send);
  refused(t, "{}", "missing \"parameters\"" + send);
  refused(t, R"({"params": {"a": "b"}})", "unknown field \"params\"" + send);
  refused(t, R"({"parameters": ["a=b"]})",
          "\"parameters\" must be an object of strings, got an array" + send);
  refused(t, R"({"parameters": "a=b"})",
          "\"parameters\" must be an object of strings, got a string" + send);
  refused(t, R"({"parameters": {}})",
          R"("parameters" is empty: name at least one, e.g. {"parameters": {"readAheadKB": "256"}})");
  const std::string strings = " (write numbers as strings: \"256\")";
  refused(t, R"({"parameters": {"readAheadKB": 256}})",
          "\"parameters\" \"readAheadKB\" must be a string, got a number" + strings);
  refused(t, R"({"parameters": {"directIO": true}})",
          "\"parameters\" \"directIO\" must be a string, got a boolean" + strings);
  refused(t, R"({"parameters": {"a": null}})",
          "\"parameters\" \"a\" must be a string, got null" + strings);
  refused(t, R"({"parameters": {"a": {"b": "c"}}})",
          "\"parameters\" \"a\" must be a string, got an object" + strings);
  refused(t, R"({"parameters": {"": "x"}})", "\"parameters\" has an empty key");
  refused(t, R"({"parameters": {"a": "1", "a": "2"}})",
          "\"parameters\" names \"a\" twice: give each key once");
}

TEST_F(admin_modify_test, modify_refuses_more_than_the_bounds_of_core_limits) {
  const std::string t = "/v1/volumes/beta/modify";
  refused(t, parameters(limits::max_options + 1),
          "\"parameters\" has " + std::to_string(limits::max_options + 1) + " entries; at most "
            + std::to_string(limits::max_options) + " are allowed");
  std::string key(limits::max_option_key_bytes + 1, 'k');
  refused(t, R"({"parameters":{")" + key + R"(":"v"}})",
          "\"parameters\" key \"" + key + "\" is "
            + std::to_string(key.size()) + " bytes long; at most "
            + std::to_string(limits::max_option_key_bytes) + " are allowed");
  std::string value(limits::max_option_value_bytes + 1, 'v');
  refused(t, R"({"parameters":{"a":")" + value + R"("}})",
          "\"parameters\" \"a\" has a value of " + std::to_string(value.size())
            + " bytes; at most " + std::to_string(limits::max_option_value_bytes)
            + " are allowed");
}

TEST_F(admin_modify_test, routes_methods_and_names) {
  unix_http_client client{path};
  auto get = client.get("/v1/volumes/beta/resize");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 405u);
  EXPECT_EQ(get->body, R"({"error":"method \"GET\" not allowed: use POST"})");
  auto post_one = post("/v1/volumes/beta", R"({"size_bytes": 1})");
  ASSERT_TRUE(post_one);
  EXPECT_EQ(post_one->status, 405u);
  EXPECT_EQ(post_one->body, R"({"error":"method \"POST\" not allowed: use GET"})");
  auto unknown = post("/v1/volumes/beta/shrink", R"({"size_bytes": 1})");
  ASSERT_TRUE(unknown);
  EXPECT_EQ(unknown->status, 404u);
  EXPECT_EQ(unknown->body, R"({"error":"unknown endpoint \"/v1/volumes/beta/shrink\": )"
                           R"(a volume has /resize, /modify, /release and /snapshot"})");
  auto bad_name = post("/v1/volumes/-x/resize", R"({"size_bytes": 1})");
  ASSERT_TRUE(bad_name);
  EXPECT_EQ(bad_name->status, 400u);
  EXPECT_EQ(bad_name->body, R"({"error":"invalid volume name \"-x\": must match )"
                            R"([A-Za-z0-9][A-Za-z0-9_.-]{0,127}"})");
  auto trailing = post("/v1/volumes/beta/resize/", R"({"size_bytes": 1})");
  ASSERT_TRUE(trailing);
  EXPECT_EQ(trailing->status, 200u) << trailing->body;
  EXPECT_EQ(modifying->requests().size(), 1u);
}

// -- the registry's errors ------------------------------------------------------------

TEST_F(admin_modify_test, the_registry_errors_map_to_statuses_with_their_message) {
  auto missing = post("/v1/volumes/gamma/resize", R"({"size_bytes": 1})");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404u);
  EXPECT_EQ(missing->body, R"({"error":"no volume named \"gamma\""})");
  struct mapping {
    ec code;
    unsigned status;
  };
  for (auto [code, status] : {mapping{ec::resource_exhausted, 429},
                              mapping{ec::out_of_range, 400},
                              mapping{ec::invalid_argument, 400},
                              mapping{ec::failed_precondition, 409},
                              mapping{ec::unsupported, 409},
                              mapping{ec::aborted, 503},
                              mapping{ec::timeout, 504},
                              mapping{ec::backend_failure, 500}}) {
    std::string message = std::string{"refused: "} + to_string(code);
    {
      std::lock_guard<std::mutex> guard{modifying->mtx};
      modifying->fail_with = make_error(code, message);
    }
    for (auto [target, body] :
         {std::pair{"/v1/volumes/beta/resize", R"({"size_bytes": 1})"},
          std::pair{"/v1/volumes/beta/modify", R"({"parameters": {"a": "b"}})"}}) {
      auto res = post(target, body);
      ASSERT_TRUE(res);
      EXPECT_EQ(res->status, status) << to_string(code) << " " << target;
      EXPECT_EQ(res->body, R"({"error":")" + message + R"("})");
    }
  }
}

TEST_F(admin_modify_test, a_cooldown_refusal_is_429_and_berthctl_says_when) {
  {
    std::lock_guard<std::mutex> guard{modifying->mtx};
    modifying->fail_with =
      make_error(ec::resource_exhausted,
                 "volume beta was modified at 10:00:00; it may be modified again at 16:00:00");
  }
  auto res = post("/v1/volumes/beta/resize", R"({"size_bytes": 1})");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 429u);
  std::string out;
  std::string err;
  EXPECT_EQ(ctl({"modify", "beta", "readAheadKB=256"}, out, err), cli::exit_failure);
  EXPECT_EQ(err, "berthctl: volume beta was modified at 10:00:00; it may be modified again at "
                 "16:00:00\n");
  EXPECT_EQ(out, "");
}

// -- inspect shows size, parameters and modifications, also when unset -------------------

TEST_F(admin_modify_test, inspect_json_shows_size_parameters_and_modifications_when_unset) {
  unix_http_client client{path};
  for (const std::string target : {"/v1/volumes/beta", "/v1/volumes"}) {
    auto res = client.get(target);
    ASSERT_TRUE(res);
    ASSERT_EQ(res->status, 200u);
    rapidjson::Document doc;
    doc.Parse(res->body.c_str());
    const rapidjson::Value& beta = doc.IsArray() ? doc[1] : doc;
    ASSERT_TRUE(beta.IsObject()) << res->body;
    ASSERT_TRUE(beta.HasMember("capacity_bytes")) << res->body;
    EXPECT_EQ(beta["capacity_bytes"].GetUint64(), 0u);
    ASSERT_TRUE(beta.HasMember("mutable_parameters")) << res->body;
    EXPECT_TRUE(beta["mutable_parameters"].IsObject());
    EXPECT_EQ(beta["mutable_parameters"].MemberCount(), 0u);
    ASSERT_TRUE(beta.HasMember("modifications")) << res->body;
    EXPECT_EQ(beta["modifications"].GetUint64(), 0u);
  }
  std::string out;
  std::string err;
  ASSERT_EQ(ctl({"inspect", "beta", "--json"}, out, err), 0) << err;
  EXPECT_NE(out.find(R"("capacity_bytes":0,)"), std::string::npos) << out;
  EXPECT_NE(out.find(R"("mutable_parameters":{},)"), std::string::npos) << out;
  EXPECT_NE(out.find(R"("modifications":0)"), std::string::npos) << out;
}

// -- berthctl resize and modify ---------------------------------------------------------

TEST_F(admin_modify_test, berthctl_resize_and_modify_print_what_changed) {
  std::string out;
  std::string err;
  ASSERT_EQ(ctl({"resize", "beta", "2Gi"}, out, err), cli::exit_ok) << err;
  EXPECT_EQ(out, "volume beta resized: size 2 GiB (2147483648 bytes); mutable parameters -; "
                 "modifications 1\n");
  ASSERT_EQ(ctl({"modify", "beta", "readAheadKB=256", "directIO=on"}, out, err), cli::exit_ok)
    << err;
  EXPECT_EQ(out, "volume beta modified: size 2 GiB (2147483648 bytes); mutable parameters "
                 "directIO=on, readAheadKB=256; modifications 2\n");
  auto got = modifying->requests();
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].second.required_bytes, 2147483648u);
  EXPECT_EQ(got[1].second.parameters, (option_map{{"readAheadKB", "256"}, {"directIO", "on"}}));
  ASSERT_EQ(ctl({"inspect", "beta"}, out, err), cli::exit_ok) << err;
  EXPECT_NE(out.find("size:          2 GiB (2147483648 bytes)\n"
                     "mutable:       directIO=on, readAheadKB=256\n"
                     "modifications: 2\n"),
            std::string::npos)
    << out;
  ASSERT_EQ(ctl({"resize", "beta", "3G", "--json"}, out, err), cli::exit_ok) << err;
  auto rec = record_from_json(out);
  ASSERT_TRUE(rec) << out;
  EXPECT_EQ(rec->capacity_bytes, 3u << 30);
  EXPECT_EQ(rec->modifications, 3u);
  ASSERT_EQ(ctl({"modify", "beta", "readAheadKB=512", "--json"}, out, err), cli::exit_ok) << err;
  rec = record_from_json(out);
  ASSERT_TRUE(rec) << out;
  EXPECT_EQ(rec->mutable_parameters.at("readAheadKB"), "512");
}

TEST_F(admin_modify_test, berthctl_reports_what_berthd_refused) {
  std::string out;
  std::string err;
  EXPECT_EQ(ctl({"resize", "gamma", "1G"}, out, err), cli::exit_failure);
  EXPECT_EQ(err, "berthctl: no volume named \"gamma\"\n");
  EXPECT_EQ(modifying->requests().size(), 1u); // the registry said so
  std::vector<std::string> args{"modify", "beta"};
  for (size_t i = 0; i <= limits::max_options; ++i) {
    args.push_back("p" + std::to_string(i) + "=v");
  }
  EXPECT_EQ(ctl(args, out, err), cli::exit_failure);
  EXPECT_EQ(err, "berthctl: \"parameters\" has " + std::to_string(limits::max_options + 1)
                   + " entries; at most " + std::to_string(limits::max_options)
                   + " are allowed\n");
  EXPECT_EQ(modifying->requests().size(), 1u); // refused before the registry
}
