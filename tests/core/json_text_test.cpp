#include "core/json_text.hpp"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

using berth::json_quote;
using berth::plugin_error_body;

namespace {

/// The string a JSON reader gets back from `literal`.
std::string read_back(const std::string& literal) {
  rapidjson::Document doc;
  doc.Parse(literal.c_str(), literal.size());
  EXPECT_FALSE(doc.HasParseError()) << literal;
  EXPECT_TRUE(doc.IsString()) << literal;
  return doc.IsString() ? std::string{doc.GetString(), doc.GetStringLength()} : std::string{};
}

} // namespace

TEST(json_quote, escapes_what_json_must_and_keeps_the_rest) {
  EXPECT_EQ(json_quote("v1"), R"("v1")");
  EXPECT_EQ(json_quote("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(json_quote("a\nb\tc"), R"("a\nb\tc")");
  EXPECT_EQ(json_quote(std::string("\x01", 1)), R"("\u0001")");
  EXPECT_EQ(json_quote(""), R"("")");
}

TEST(json_quote, reads_back_as_the_same_bytes) {
  std::string all;
  for (int c = 0; c < 0x80; ++c) {
    all += static_cast<char>(c);
  }
  all += "é…";
  EXPECT_EQ(read_back(json_quote(all)), all);
}

TEST(plugin_error_body, is_the_docker_err_object) {
  EXPECT_EQ(plugin_error_body("request header too large"),
            R"({"Err":"request header too large"})");
  EXPECT_EQ(plugin_error_body(""), R"({"Err":""})");
  // A control character is escaped, not dropped: dockerd shows the message as sent.
  rapidjson::Document doc;
  auto body = plugin_error_body("internal error: bad\nline \"x\"");
  doc.Parse(body.c_str(), body.size());
  ASSERT_FALSE(doc.HasParseError()) << body;
  EXPECT_STREQ(doc["Err"].GetString(), "internal error: bad\nline \"x\"");
}
