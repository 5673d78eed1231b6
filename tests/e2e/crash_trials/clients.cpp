#include "tests/e2e/crash_trials/clients.hpp"

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "core/errors.hpp"

namespace berth::crash_trials {

namespace {

/// An HTTP exchange's outcome: no reply is unknown; a reply is an answer, a success
/// only with status 200 and no Err (the Docker plugin protocol's error field).
answer http_outcome(caf::expected<http_response> reply) {
  if (!reply) {
    return {outcome::unknown, "transport: " + describe(reply.error())};
  }
  rapidjson::Document doc;
  doc.Parse(reply->body.c_str(), reply->body.size());
  std::string err;
  if (!doc.HasParseError() && doc.IsObject()) {
    auto it = doc.FindMember("Err");
    if (it != doc.MemberEnd() && it->value.IsString()) {
      err = it->value.GetString();
    }
  }
  if (reply->status != 200 || !err.empty()) {
    return {outcome::refused, "HTTP " + std::to_string(reply->status) + ": "
                                + (err.empty() ? reply->body.substr(0, 300) : err)};
  }
  return {outcome::done, std::move(reply->body)};
}

std::unique_ptr<unix_http_client> make_http(const std::string& socket) {
  auto http = std::make_unique<unix_http_client>(socket);
  http->set_timeout(std::chrono::duration_cast<std::chrono::milliseconds>(call_timeout));
  return http;
}

} // namespace

plugin_client::plugin_client(const std::string& socket) : http_(make_http(socket)) {
}

answer plugin_client::call(const std::string& endpoint, const std::string& body) {
  return http_outcome(http_->post("/VolumeDriver." + endpoint, body));
}

admin_client::admin_client(const std::string& socket) : http_(make_http(socket)) {
}

answer admin_client::get(const std::string& target) {
  return http_outcome(http_->get(target));
}

answer admin_client::post(const std::string& target, const std::string& body) {
  return http_outcome(http_->post(target, body, "application/json"));
}

answer outcome_of(const grpc::Status& st) {
  if (st.ok()) {
    return {outcome::done, ""};
  }
  auto text = "code " + std::to_string(static_cast<int>(st.error_code())) + " "
              + st.error_message();
  switch (st.error_code()) {
    case grpc::StatusCode::UNAVAILABLE:       // the connection broke or never came
    case grpc::StatusCode::DEADLINE_EXCEEDED: // no answer in time
    case grpc::StatusCode::CANCELLED:
    case grpc::StatusCode::UNKNOWN:
      return {outcome::unknown, text};
    default:
      return {outcome::refused, text};
  }
}

std::string json_string(const std::string& s) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w{buf};
  w.String(s.c_str(), static_cast<rapidjson::SizeType>(s.size()));
  return buf.GetString();
}

} // namespace berth::crash_trials
