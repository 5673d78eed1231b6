#include "apps/bench/plugin_client.hpp"

#include <cstring>

#include <rapidjson/encodedstream.h>
#include <rapidjson/memorystream.h>
#include <rapidjson/reader.h>

#include "core/errors.hpp"
#include "core/json_text.hpp"

namespace berth::bench {

namespace {

/// Reads a plugin answer in one SAX pass, without a DOM: the root must be an object;
/// its first Err member, when a string, is the error; its first Volumes member must be
/// an array or null (`has_volumes`), and each element of that array whose first Name
/// member is a string is counted (and, with `names`, kept). The same verdicts as
/// parsing a Document and looking the members up, with no allocation per volume.
class reply_handler : public rapidjson::BaseReaderHandler<rapidjson::UTF8<>, reply_handler> {
public:
  explicit reply_handler(std::vector<std::string>* names) : names_(names) {}

  bool root_object = false;
  bool has_volumes = false;
  size_t count = 0;
  std::string err;

  bool Default() { return scalar(nullptr, 0, false); }
  bool Null() {
    if (next_ == slot::volumes) {
      has_volumes = true;
    }
    return scalar(nullptr, 0, false);
  }
  bool String(const char* str, rapidjson::SizeType len, bool) { return scalar(str, len, true); }
  bool Key(const char* str, rapidjson::SizeType len, bool) {
    auto is = [&](const char* k) { return len == std::strlen(k) && std::memcmp(str, k, len) == 0; };
    if (depth_ == 1) {
      if (!seen_err_ && is("Err")) {
        seen_err_ = true;
        next_ = slot::err;
      } else if (!seen_volumes_ && is("Volumes")) {
        seen_volumes_ = true;
        next_ = slot::volumes;
      }
    } else if (in_volumes_ && depth_ == volumes_depth_ + 1 && !seen_name_ && is("Name")) {
      seen_name_ = true;
      next_ = slot::name;
    }
    return true;
  }
  bool StartObject() {
    next_ = slot::none;
    if (depth_ == 0) {
      root_object = true;
    } else if (in_volumes_ && depth_ == volumes_depth_) {
      seen_name_ = false;
    }
    ++depth_;
    return true;
  }
  bool EndObject(rapidjson::SizeType) {
    --depth_;
    return true;
  }
  bool StartArray() {
    if (depth_ == 0) {
      return false; // not an object: stop here
    }
    if (next_ == slot::volumes) {
      has_volumes = true;
      in_volumes_ = true;
      volumes_depth_ = depth_ + 1;
    }
    next_ = slot::none;
    ++depth_;
    return true;
  }
  bool EndArray(rapidjson::SizeType) {
    if (in_volumes_ && depth_ == volumes_depth_) {
      in_volumes_ = false;
    }
    --depth_;
    return true;
  }

private:
  enum class slot { none, err, volumes, name };

  bool scalar(const char* str, size_t len, bool is_string) {
    auto s = next_;
    next_ = slot::none;
    if (depth_ == 0) {
      return false; // a scalar root is not an object
    }
    if (is_string && s == slot::err) {
      err.assign(str, len);
    } else if (is_string && s == slot::name) {
      ++count;
      if (names_ != nullptr) {
        names_->emplace_back(str, len);
      }
    }
    return true;
  }

  std::vector<std::string>* names_;
  int depth_ = 0;
  int volumes_depth_ = 0;
  bool in_volumes_ = false;
  bool seen_err_ = false;
  bool seen_volumes_ = false;
  bool seen_name_ = false;
  slot next_ = slot::none;
};

} // namespace

plugin_client::plugin_client(std::string socket_path) : socket_path_(std::move(socket_path)) {
}

call_result plugin_client::exchange(const std::string& endpoint, const std::string& body,
                                    std::vector<std::string>* names, size_t* count) {
  call_result res;
  if (!http_) {
    http_ = std::make_unique<unix_http_client>(socket_path_);
  }
  auto target = endpoint.empty() || endpoint[0] != '/' ? "/VolumeDriver." + endpoint : endpoint;
  auto reply = http_->post_reusing(target, body, std::move(reply_));
  if (!reply) {
    // Start over with a fresh connection on the next call.
    http_.reset();
    reply_.clear();
    res.err = "transport: " + describe(reply.error());
    return res;
  }
  reply_ = std::move(reply->body);
  if (names != nullptr) {
    names->clear();
  }
  reply_handler handler{names};
  rapidjson::MemoryStream ms(reply_.data(), reply_.size());
  rapidjson::EncodedInputStream<rapidjson::UTF8<>, rapidjson::MemoryStream> in(ms);
  rapidjson::Reader reader;
  bool is_json = !reader.Parse(in, handler).IsError() && handler.root_object;
  if (!is_json) {
    if (names != nullptr) {
      names->clear();
    }
    res.err = "reply is not a JSON object: " + reply_.substr(0, 200);
    return res;
  }
  if (!handler.err.empty()) {
    res.err = std::move(handler.err);
    return res;
  }
  if (reply->status != 200) {
    res.err = "HTTP " + std::to_string(reply->status) + ": " + reply_.substr(0, 200);
    return res;
  }
  if (count != nullptr) {
    if (!handler.has_volumes) {
      res.err = "List reply has no Volumes array";
      return res;
    }
    *count = handler.count;
  }
  res.ok = true;
  return res;
}

call_result plugin_client::call(const std::string& endpoint, const std::string& body) {
  auto res = exchange(endpoint, body, nullptr, nullptr);
  res.body = reply_;
  return res;
}

call_result plugin_client::create(const std::string& name) {
  return call("Create", "{\"Name\":" + json_quote(name) + ",\"Opts\":{}}");
}

call_result plugin_client::remove(const std::string& name) {
  return call("Remove", "{\"Name\":" + json_quote(name) + "}");
}

call_result plugin_client::mount(const std::string& name, const std::string& id) {
  return call("Mount", "{\"Name\":" + json_quote(name) + ",\"ID\":" + json_quote(id) + "}");
}

call_result plugin_client::unmount(const std::string& name, const std::string& id) {
  return call("Unmount", "{\"Name\":" + json_quote(name) + ",\"ID\":" + json_quote(id) + "}");
}

call_result plugin_client::list(std::vector<std::string>& names) {
  size_t count = 0;
  return exchange("List", "{}", &names, &count);
}

call_result plugin_client::list_count(size_t& count) {
  return exchange("List", "{}", nullptr, &count);
}

} // namespace berth::bench
