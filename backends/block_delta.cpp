#include "backends/block_delta.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <vector>

#include <openssl/evp.h>
#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>
#include <unistd.h>

#include "core/errors.hpp"
#include "core/json_text.hpp"
#include "core/text.hpp"

namespace berth {

namespace {

/// What one read of an image for a range takes at most.
constexpr size_t read_chunk_bytes = 1 << 20;

void put_u64(char* out, uint64_t v) {
  for (int i = 7; i >= 0; --i) {
    out[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
}

} // namespace

std::string encode_delta_header(const delta_header& h) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w{buf};
  auto str = [&w](const char* key, const std::string& v) {
    w.Key(key);
    w.String(v.c_str(), static_cast<rapidjson::SizeType>(v.size()));
  };
  w.StartObject();
  str("volume", h.volume);
  w.Key("base");
  w.StartObject();
  str("name", h.base);
  str("created_at", h.base_created_at);
  w.Key("size_bytes");
  w.Uint64(h.base_size_bytes);
  w.EndObject();
  w.Key("size_bytes");
  w.Uint64(h.size_bytes);
  w.Key("block_bytes");
  w.Uint64(h.block_bytes);
  str("consistency", h.consistency.empty() ? "consistent" : h.consistency);
  w.EndObject();
  return buf.GetString();
}

caf::expected<delta_header> decode_delta_header(const std::string& line) {
  rapidjson::Document doc;
  doc.Parse(line.c_str(), line.size());
  auto bad = [&](const std::string& why) {
    return make_error(ec::invalid_argument, "the delta's header " + why + ": " + quote_input(line));
  };
  if (doc.HasParseError() || !doc.IsObject()) {
    return bad("is not a JSON object");
  }
  const auto& base = json_object(doc, "base");
  auto number = [](const rapidjson::Value& obj, const char* key) -> const rapidjson::Value* {
    auto v = json_member(obj, key);
    return v != nullptr && v->IsUint64() ? v : nullptr;
  };
  delta_header h;
  h.volume = json_text(doc, "volume");
  h.base = json_text(base, "name");
  h.base_created_at = json_text(base, "created_at");
  h.consistency = json_text(doc, "consistency");
  if (h.consistency == "consistent") {
    h.consistency.clear();
  }
  auto base_size = number(base, "size_bytes");
  auto size = number(doc, "size_bytes");
  auto block = number(doc, "block_bytes");
  if (h.volume.empty() || h.base.empty() || h.base_created_at.empty() || base_size == nullptr
      || size == nullptr || block == nullptr) {
    return bad("lacks one of volume, base.name, base.created_at, base.size_bytes, size_bytes "
               "and block_bytes");
  }
  h.base_size_bytes = base_size->GetUint64();
  h.size_bytes = size->GetUint64();
  h.block_bytes = block->GetUint64();
  return h;
}

struct delta_hash::context {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  context() { EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr); }
  ~context() { EVP_MD_CTX_free(ctx); }
  context(const context&) = delete;
  context& operator=(const context&) = delete;
};

delta_hash::delta_hash() : ctx_(std::make_unique<context>()) {}

delta_hash::~delta_hash() = default;

void delta_hash::add(const char* data, size_t size) {
  EVP_DigestUpdate(ctx_->ctx, data, size);
}

std::string delta_hash::digest() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_DigestFinal_ex(ctx_->ctx, out, &len);
  return {reinterpret_cast<const char*>(out), len};
}

delta_writer::delta_writer(sink_fn sink) : sink_(std::move(sink)) {}

bool delta_writer::put(const char* data, size_t size) {
  hash_.add(data, size);
  return sink_(data, size);
}

bool delta_writer::header(const delta_header& h) {
  std::string text = std::string{delta_magic} + encode_delta_header(h) + "\n";
  return put(text.data(), text.size());
}

caf::expected<bool> delta_writer::range(const byte_range& r, int fd) {
  char head[16];
  put_u64(head, r.offset);
  put_u64(head + 8, r.length);
  if (!put(head, sizeof head)) {
    return false;
  }
  ++ranges_;
  std::vector<char> chunk(std::min<uint64_t>(r.length, read_chunk_bytes));
  for (uint64_t done = 0; done < r.length;) {
    auto want = static_cast<size_t>(std::min<uint64_t>(r.length - done, chunk.size()));
    auto n = ::pread(fd, chunk.data(), want, static_cast<off_t>(r.offset + done));
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      return make_error(ec::backend_failure,
                        "reading " + std::to_string(want) + " bytes at "
                          + std::to_string(r.offset + done) + " of the volume's copy: "
                          + (n < 0 ? std::strerror(errno) : "it ends there"));
    }
    if (!put(chunk.data(), static_cast<size_t>(n))) {
      return false;
    }
    done += static_cast<uint64_t>(n);
  }
  return true;
}

bool delta_writer::end() {
  char tail[16];
  put_u64(tail, delta_end_marker);
  put_u64(tail + 8, ranges_);
  if (!put(tail, sizeof tail)) {
    return false;
  }
  auto digest = hash_.digest();
  return sink_(digest.data(), digest.size());
}

} // namespace berth
