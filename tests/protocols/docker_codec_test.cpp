#include "protocols/docker/docker_codec.hpp"

#include <gtest/gtest.h>
#include <rapidjson/document.h>

#include <algorithm>

#include "core/errors.hpp"
#include "core/limits.hpp"

using namespace berth;
using namespace berth::docker;

namespace {

template <class T>
std::string error_of(const caf::expected<T>& x) {
  EXPECT_FALSE(x) << "expected an error";
  return x ? std::string{} : describe(x.error());
}

rapidjson::Document parse(const std::string& json) {
  rapidjson::Document doc;
  doc.Parse(json.c_str());
  EXPECT_FALSE(doc.HasParseError()) << json;
  return doc;
}

} // namespace

// -- decoding ------------------------------------------------------------------

TEST(docker_codec, decodes_create_with_options) {
  auto req = decode_create(R"({"Name":"v1","Opts":{"type":"nfs","o":"addr=10.0.0.1"}})");
  ASSERT_TRUE(req) << describe(req.error());
  EXPECT_EQ(req->name, "v1");
  EXPECT_EQ(req->options, (option_map{{"type", "nfs"}, {"o", "addr=10.0.0.1"}}));
}

TEST(docker_codec, create_options_may_be_absent_or_null) {
  auto absent = decode_create(R"({"Name":"v1"})");
  ASSERT_TRUE(absent);
  EXPECT_TRUE(absent->options.empty());
  auto null = decode_create(R"({"Name":"v1","Opts":null})");
  ASSERT_TRUE(null);
  EXPECT_TRUE(null->options.empty());
}

TEST(docker_codec, decodes_name_and_mount) {
  auto name = decode_name(R"({"Name":"a_b.c-1"})");
  ASSERT_TRUE(name);
  EXPECT_EQ(name->name, "a_b.c-1");
  auto mount = decode_mount(R"({"Name":"v1","ID":"c89a0f0e1d2c3b4a"})");
  ASSERT_TRUE(mount);
  EXPECT_EQ(mount->name, "v1");
  EXPECT_EQ(mount->id, "c89a0f0e1d2c3b4a");
}

TEST(docker_codec, rejects_malformed_json) {
  EXPECT_EQ(error_of(decode_name(R"({"Name":)")),
            "malformed JSON at offset 8: Invalid value.");
  EXPECT_EQ(error_of(decode_name(R"({"Name":"v1"} x)")),
            "malformed JSON at offset 14: The document root must not be followed by other "
            "values.");
  EXPECT_EQ(error_of(decode_name("")), "request body is empty: expected a JSON object");
  EXPECT_EQ(error_of(decode_name("  \n")), "request body is empty: expected a JSON object");
}

TEST(docker_codec, survives_deep_nesting) {
  std::string deep(200000, '[');
  EXPECT_NE(error_of(decode_name(deep)).find("malformed JSON"), std::string::npos);
}

TEST(docker_codec, rejects_a_body_that_is_not_an_object) {
  EXPECT_EQ(error_of(decode_name(R"(["v1"])")),
            "request body must be a JSON object, got an array");
  EXPECT_EQ(error_of(decode_name("42")), "request body must be a JSON object, got a number");
  EXPECT_EQ(error_of(decode_name("null")), "request body must be a JSON object, got null");
}

TEST(docker_codec, rejects_missing_empty_or_non_string_names) {
  EXPECT_EQ(error_of(decode_name("{}")), "missing \"Name\"");
  EXPECT_EQ(error_of(decode_name(R"({"name":"v1"})")), "missing \"Name\"");
  EXPECT_EQ(error_of(decode_name(R"({"Name":""})")), "\"Name\" is empty");
  EXPECT_EQ(error_of(decode_name(R"({"Name":7})")), "\"Name\" must be a string, got a number");
  EXPECT_EQ(error_of(decode_name(R"({"Name":null})")), "\"Name\" must be a string, got null");
  EXPECT_EQ(error_of(decode_create(R"({"Name":["v"]})")),
            "\"Name\" must be a string, got an array");
  EXPECT_EQ(error_of(decode_mount(R"({"ID":"x"})")), "missing \"Name\"");
}

TEST(docker_codec, rejects_invalid_volume_names) {
  EXPECT_EQ(error_of(decode_name(R"({"Name":"../x"})")),
            R"(invalid volume name "../x": must match [A-Za-z0-9][A-Za-z0-9_.-]{0,127})");
  EXPECT_EQ(error_of(decode_create(R"({"Name":"a/b"})")),
            R"(invalid volume name "a/b": must match [A-Za-z0-9][A-Za-z0-9_.-]{0,127})");
  EXPECT_EQ(error_of(decode_mount(R"({"Name":".hidden","ID":"x"})")),
            R"(invalid volume name ".hidden": must match [A-Za-z0-9][A-Za-z0-9_.-]{0,127})");
  EXPECT_EQ(error_of(decode_name(R"({"Name":"a\u0000b"})")),
            R"(invalid volume name "a\x00b": must match [A-Za-z0-9][A-Za-z0-9_.-]{0,127})");
  auto long_name = std::string(129, 'a');
  auto err = error_of(decode_name(R"({"Name":")" + long_name + "\"}"));
  EXPECT_EQ(err.rfind("volume name \"aaaa", 0), 0u) << err;
  EXPECT_NE(err.find("is 129 bytes long, at most 128 are allowed"), std::string::npos) << err;
  EXPECT_TRUE(decode_name(R"({"Name":")" + std::string(128, 'a') + "\"}"));
}

TEST(docker_codec, rejects_missing_or_invalid_mount_ids) {
  EXPECT_EQ(error_of(decode_mount(R"({"Name":"v1"})")), "missing \"ID\"");
  EXPECT_EQ(error_of(decode_mount(R"({"Name":"v1","ID":""})")), "\"ID\" is empty");
  EXPECT_EQ(error_of(decode_mount(R"({"Name":"v1","ID":12})")),
            "\"ID\" must be a string, got a number");
  EXPECT_EQ(error_of(decode_mount(R"({"Name":"v1","ID":"a\nb"})")),
            R"(invalid mount ID "a\x0ab": must be 1 to 256 characters without control characters)");
  auto err = error_of(decode_mount(R"({"Name":"v1","ID":")" + std::string(257, 'c') + "\"}"));
  EXPECT_EQ(err.rfind("mount ID \"ccc", 0), 0u) << err;
  EXPECT_NE(err.find("...\" is 257 bytes long, at most 256 are allowed"), std::string::npos)
    << err;
}

TEST(docker_codec, rejects_options_that_are_not_strings) {
  EXPECT_EQ(error_of(decode_create(R"({"Name":"v1","Opts":["a"]})")),
            "\"Opts\" must be an object of strings, got an array");
  EXPECT_EQ(error_of(decode_create(R"({"Name":"v1","Opts":"size=1"})")),
            "\"Opts\" must be an object of strings, got a string");
  EXPECT_EQ(error_of(decode_create(R"({"Name":"v1","Opts":{"size":10}})")),
            "option \"size\" must be a string, got a number");
  EXPECT_EQ(error_of(decode_create(R"({"Name":"v1","Opts":{"ro":true}})")),
            "option \"ro\" must be a string, got a boolean");
}

TEST(docker_codec, decode_errors_are_invalid_argument) {
  auto x = decode_name("{}");
  ASSERT_FALSE(x);
  EXPECT_EQ(x.error(), make_error(ec::invalid_argument, "missing \"Name\""));
}

// -- encoding ------------------------------------------------------------------

TEST(docker_codec, encodes_simple_replies) {
  EXPECT_EQ(encode_ok(), R"({"Err":""})");
  EXPECT_EQ(encode_error("no volume named \"x\""), R"({"Err":"no volume named \"x\""})");
  EXPECT_EQ(encode_error(""), R"({"Err":"unknown error"})");
  EXPECT_EQ(encode_mountpoint("/mnt/v1"), R"({"Mountpoint":"/mnt/v1","Err":""})");
  EXPECT_EQ(encode_capabilities(), R"({"Capabilities":{"Scope":"local"}})");
  EXPECT_EQ(encode_activate(), R"({"Implements":["VolumeDriver"]})");
}

TEST(docker_codec, encodes_get) {
  volume_record rec;
  rec.name = "v1";
  rec.backend = "local";
  rec.options = {{"type", "tmpfs"}};
  rec.created_at = "2026-01-02T03:04:05Z";
  rec.mounts = {{"abc", 2}};
  rec.mounted = true;
  rec.mountpoint = "/mnt/v1";
  EXPECT_EQ(encode_get(rec),
            R"({"Volume":{"Name":"v1","Mountpoint":"/mnt/v1","CreatedAt":"2026-01-02T03:04:05Z",)"
            R"("Status":{"mounts":{"abc":2},"backend":"local","created_at":"2026-01-02T03:04:05Z",)"
            R"("options":{"type":"tmpfs"},"mounted":true,"health":"healthy"}},"Err":""})");
  rec.mounted = false;
  auto doc = parse(encode_get(rec));
  EXPECT_STREQ(doc["Volume"]["Mountpoint"].GetString(), "");
  EXPECT_FALSE(doc["Volume"]["Status"]["mounted"].GetBool());
}

TEST(docker_codec, encodes_the_conditions_of_an_abnormal_volume_in_its_status) {
  volume_record rec;
  rec.name = "v1";
  auto doc = parse(encode_get(rec,
                              {{abnormal_reason::image_missing, "the image is gone"},
                               {abnormal_reason::call_hung, "mount hung"}}));
  const auto& status = doc["Volume"]["Status"];
  EXPECT_STREQ(status["health"].GetString(), "abnormal");
  ASSERT_EQ(status["conditions"].Size(), 2u);
  EXPECT_STREQ(status["conditions"][0]["reason"].GetString(), "image_missing");
  EXPECT_STREQ(status["conditions"][0]["message"].GetString(), "the image is gone");
  EXPECT_STREQ(status["conditions"][1]["reason"].GetString(), "call_hung");
}

TEST(docker_codec, encodes_list) {
  volume_record a;
  a.name = "a";
  a.mounted = true;
  a.mountpoint = "/mnt/a";
  volume_record b;
  b.name = "b";
  b.mountpoint = "/stale";
  EXPECT_EQ(encode_list(share({a, b})),
            R"({"Volumes":[{"Name":"a","Mountpoint":"/mnt/a"},{"Name":"b","Mountpoint":""}],)"
            R"("Err":""})");
  EXPECT_EQ(encode_list({}), R"({"Volumes":[],"Err":""})");
}

// -- bounds (core/limits.hpp): at the bound accepted, over it refused by name ------

namespace {

std::string opts_json(size_t count, size_t key_bytes, size_t value_bytes) {
  std::string out = R"({"Name":"v1","Opts":{)";
  for (size_t i = 0; i < count; ++i) {
    auto key = std::to_string(i);
    key.resize(std::max(key_bytes, key.size()), 'k');
    out += (i == 0 ? "" : ",") + ("\"" + key + "\":\"" + std::string(value_bytes, 'v') + "\"");
  }
  return out + "}}";
}

} // namespace

TEST(docker_codec, option_count_is_bounded) {
  EXPECT_TRUE(decode_create(opts_json(limits::max_options, 4, 4)));
  auto msg = error_of(decode_create(opts_json(limits::max_options + 1, 4, 4)));
  EXPECT_NE(msg.find("at most " + std::to_string(limits::max_options)), std::string::npos) << msg;
}

TEST(docker_codec, option_key_and_value_lengths_are_bounded) {
  EXPECT_TRUE(decode_create(opts_json(1, limits::max_option_key_bytes, 1)));
  auto key = error_of(decode_create(opts_json(1, limits::max_option_key_bytes + 1, 1)));
  EXPECT_NE(key.find("option name"), std::string::npos) << key;
  EXPECT_TRUE(decode_create(opts_json(1, 1, limits::max_option_value_bytes)));
  auto value = error_of(decode_create(opts_json(1, 1, limits::max_option_value_bytes + 1)));
  EXPECT_NE(value.find("the value of option"), std::string::npos) << value;
  EXPECT_NE(value.find(std::to_string(limits::max_option_value_bytes)), std::string::npos);
}

TEST(docker_codec, name_length_is_bounded) {
  std::string at(limits::max_name_bytes, 'n');
  EXPECT_TRUE(decode_name(R"({"Name":")" + at + "\"}"));
  auto msg = error_of(decode_name(R"({"Name":")" + at + "n\"}"));
  EXPECT_NE(msg.find("at most " + std::to_string(limits::max_name_bytes)), std::string::npos)
    << msg;
}

TEST(docker_codec, mount_id_length_is_bounded) {
  std::string at(limits::max_mount_id_bytes, 'i');
  EXPECT_TRUE(decode_mount(R"({"Name":"v1","ID":")" + at + "\"}"));
  auto msg = error_of(decode_mount(R"({"Name":"v1","ID":")" + at + "i\"}"));
  EXPECT_NE(msg.find("at most " + std::to_string(limits::max_mount_id_bytes)), std::string::npos)
    << msg;
}
