// The delta format (backends/block_delta.hpp): its header both ways, and a writer's stream
// read back as the format describes it: the magic, the header line, each range's position
// and bytes from the image, the end record with the count, and the SHA-256 of all before
// it. A sink that stops ends the writer. The reader takes a writer's stream in pieces of
// any size and refuses, naming what is wrong, a delta that is damaged, reordered, outside
// the volume, cut short or followed by more. The whole path, applied to a real image and
// compared byte for byte: tests/e2e/snapshot_diff_e2e.sh.

#include "backends/block_delta.hpp"
#include "backends/block_delta_reader.hpp"

#include <string>
#include <vector>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <unistd.h>

#include "core/errors.hpp"
#include "temp_state.hpp"

namespace berth {
namespace {

uint64_t u64_at(const std::string& s, size_t pos) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) {
    v = (v << 8) | static_cast<unsigned char>(s[pos + i]);
  }
  return v;
}

std::string sha256(const std::string& s) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(s.data(), s.size(), digest, &len, EVP_sha256(), nullptr);
  return {reinterpret_cast<const char*>(digest), len};
}

delta_header sample_header() {
  delta_header h;
  h.volume = "data";
  h.base = "mon";
  h.base_created_at = "2026-12-07T10:00:00Z";
  h.base_size_bytes = 1 << 20;
  h.size_bytes = 2 << 20;
  h.consistency = "crash-consistent";
  return h;
}

TEST(block_delta, its_header_reads_back_and_a_bad_one_is_named) {
  auto h = sample_header();
  auto back = decode_delta_header(encode_delta_header(h));
  ASSERT_TRUE(back) << describe(back.error());
  EXPECT_EQ(back->volume, "data");
  EXPECT_EQ(back->base, "mon");
  EXPECT_EQ(back->base_created_at, h.base_created_at);
  EXPECT_EQ(back->base_size_bytes, h.base_size_bytes);
  EXPECT_EQ(back->size_bytes, h.size_bytes);
  EXPECT_EQ(back->block_bytes, delta_block_bytes);
  EXPECT_EQ(back->consistency, "crash-consistent");
  h.consistency.clear();
  auto consistent = decode_delta_header(encode_delta_header(h));
  ASSERT_TRUE(consistent);
  EXPECT_EQ(consistent->consistency, "") << "\"consistent\" is the record's empty value";
  for (const std::string& bad : {std::string{"[]"}, std::string{"{\"volume\":\"data\"}"},
                                 std::string{"{\"volume\":\"d\",\"base\":{\"name\":\"m\"}}"}}) {
    auto refused = decode_delta_header(bad);
    ASSERT_FALSE(refused) << bad;
    EXPECT_EQ(refused.error(), ec::invalid_argument);
    EXPECT_NE(describe(refused.error()).find("the delta's header"), std::string::npos);
  }
}

TEST(block_delta, a_stream_holds_each_range_its_count_and_the_hash_of_all_before) {
  test::temp_state dir;
  const auto path = dir.path() + "/image";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 2 << 20), 0);
  std::string a(100, 'a');
  std::string b(3 << 20 >> 1, 'b'); // 1.5 MiB: more than one read of the image
  ASSERT_EQ(::pwrite(fd, a.data(), a.size(), 4096), static_cast<ssize_t>(a.size()));
  ASSERT_EQ(::pwrite(fd, b.data(), b.size(), 1 << 19), static_cast<ssize_t>(b.size()));
  std::string out;
  delta_writer w{[&out](const char* data, size_t size) {
    out.append(data, size);
    return true;
  }};
  ASSERT_TRUE(w.header(sample_header()));
  auto first = w.range({4096, a.size()}, fd);
  ASSERT_TRUE(first && *first);
  auto second = w.range({1 << 19, b.size()}, fd);
  ASSERT_TRUE(second && *second);
  ASSERT_TRUE(w.end());

  const std::string magic = delta_magic;
  ASSERT_EQ(out.substr(0, magic.size()), magic);
  auto line_end = out.find('\n', magic.size());
  ASSERT_NE(line_end, std::string::npos);
  EXPECT_TRUE(decode_delta_header(out.substr(magic.size(), line_end - magic.size())));
  size_t pos = line_end + 1;
  EXPECT_EQ(u64_at(out, pos), 4096u);
  EXPECT_EQ(u64_at(out, pos + 8), a.size());
  EXPECT_EQ(out.substr(pos + 16, a.size()), a);
  pos += 16 + a.size();
  EXPECT_EQ(u64_at(out, pos), uint64_t{1} << 19);
  EXPECT_EQ(u64_at(out, pos + 8), b.size());
  EXPECT_EQ(out.substr(pos + 16, b.size()), b);
  pos += 16 + b.size();
  EXPECT_EQ(u64_at(out, pos), delta_end_marker);
  EXPECT_EQ(u64_at(out, pos + 8), 2u) << "the number of ranges";
  pos += 16;
  ASSERT_EQ(out.size(), pos + 32);
  EXPECT_EQ(out.substr(pos), sha256(out.substr(0, pos)));

  // A range past the image's end is a read failure that names where.
  auto past = w.range({3 << 20, 10}, fd);
  ASSERT_FALSE(past);
  EXPECT_NE(describe(past.error()).find("it ends there"), std::string::npos)
    << describe(past.error());
  ::close(fd);
}

TEST(block_delta, a_sink_that_stops_stops_the_writer) {
  test::temp_state dir;
  const auto path = dir.path() + "/image";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 1 << 20), 0);
  size_t calls = 0;
  delta_writer w{[&calls](const char*, size_t) { return ++calls < 2; }};
  EXPECT_TRUE(w.header(sample_header()));
  auto r = w.range({0, 4096}, fd);
  ASSERT_TRUE(r);
  EXPECT_FALSE(*r);
  EXPECT_EQ(calls, 2u);
  ::close(fd);
}

/// A delta of `ranges` of an image, as the writer writes it: a range's bytes are 'a' in
/// the image's first MiB, 'b' in its second.
std::string sample_delta(const std::vector<byte_range>& ranges = {{4096, 100}, {1 << 20, 70000}}) {
  test::temp_state dir;
  const auto path = dir.path() + "/image";
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(::ftruncate(fd, 4 << 20), 0); // past the header's size: a range may go past it
  for (const auto& r : ranges) {
    std::string bytes(r.length, static_cast<char>('a' + (r.offset >> 20)));
    EXPECT_EQ(::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(r.offset)),
              static_cast<ssize_t>(bytes.size()));
  }
  std::string out;
  delta_writer w{[&out](const char* data, size_t size) {
    out.append(data, size);
    return true;
  }};
  EXPECT_TRUE(w.header(sample_header()));
  for (const auto& r : ranges) {
    auto put = w.range(r, fd);
    EXPECT_TRUE(put && *put);
  }
  EXPECT_TRUE(w.end());
  ::close(fd);
  return out;
}

/// What a reader made of `delta` fed in pieces of `piece` bytes: the error, if any.
caf::error read_delta(const std::string& delta, size_t piece, std::string* image = nullptr) {
  delta_reader r{[image](uint64_t offset, const char* data, size_t size) -> caf::error {
    if (image != nullptr) {
      image->replace(offset, size, data, size);
    }
    return {};
  }};
  for (size_t pos = 0; pos < delta.size(); pos += piece) {
    if (auto err = r.feed(delta.data() + pos, std::min(piece, delta.size() - pos))) {
      return err;
    }
  }
  return r.finish();
}

TEST(block_delta, a_reader_takes_a_writers_stream_in_pieces_of_any_size) {
  const auto delta = sample_delta();
  for (size_t piece : {size_t{1}, size_t{7}, size_t{4096}, delta.size()}) {
    std::string image(2 << 20, '\0');
    EXPECT_FALSE(read_delta(delta, piece, &image)) << "pieces of " << piece;
    EXPECT_EQ(image.substr(4096, 100), std::string(100, 'a'));
    EXPECT_EQ(image.substr(1 << 20, 70000), std::string(70000, 'b'));
    EXPECT_EQ(image.substr(0, 4096), std::string(4096, '\0')) << "nothing else is written";
  }
  delta_reader r;
  ASSERT_FALSE(r.feed(delta.data(), delta.size()));
  ASSERT_TRUE(r.header());
  EXPECT_EQ(r.header()->base, "mon");
  EXPECT_TRUE(r.complete());
  EXPECT_EQ(r.ranges(), 2u);
  EXPECT_EQ(r.changed_bytes(), 70100u);
}

TEST(block_delta, a_reader_refuses_a_damaged_reordered_or_cut_delta_naming_why) {
  const auto delta = sample_delta();
  auto refused = [](const std::string& bad, const std::string& why) {
    auto err = read_delta(bad, 4096);
    EXPECT_TRUE(err) << why;
    EXPECT_EQ(err, ec::invalid_argument) << why;
    EXPECT_NE(describe(err).find(why), std::string::npos) << describe(err);
  };
  auto altered = delta;
  altered[delta.size() / 2] ^= 1; // a byte of the second range's data
  refused(altered, "does not match its SHA-256");
  refused(delta.substr(0, delta.size() - 1), "it was cut short");
  refused(delta.substr(0, 100), "it was cut short");
  refused(delta + "x", "goes on after its hash: 1 more bytes");
  refused("GIF89a" + delta.substr(6), "is not one of berth's");
  std::string no_line = delta_magic + std::string(1 << 17, '{');
  refused(no_line, "header is not one line");
  refused(sample_delta({{1 << 20, 100}, {4096, 100}}), "before the end of the range before it");
  refused(sample_delta({{4096, 100}, {4100, 100}}), "before the end of the range before it");
  refused(sample_delta({{(2 << 20) - 10, 20}}), "past the volume's size of 2097152 bytes");
}

} // namespace
} // namespace berth
