// block_backend::apply_delta without root, over plain image files (no loop device needed):
// a delta written by the delta writer lands byte for byte on a volume that holds its base's
// bytes, and every refusal (another base, a volume that differs from it, a damaged delta, a
// resize between) names what is wrong and leaves the image as it was, with no temp copy
// beside it. A real volume through berthctl: tests/e2e/snapshot_diff_e2e.sh.

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <iterator>

#include "backends/block_delta.hpp"
#include "tests/backends/block_fixture.hpp"

namespace berth {
namespace {

using namespace block_test;

constexpr uint64_t image_bytes = 4 * mib;

std::string read_file(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_at(const std::string& path, uint64_t offset, const std::string& bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(::pwrite(fd, bytes.data(), bytes.size(), static_cast<off_t>(offset)),
            static_cast<ssize_t>(bytes.size()));
  ::close(fd);
}

void make_image(const std::string& path) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream{path};
  fs::resize_file(path, image_bytes);
  write_at(path, 0, std::string(8192, 's')); // a "superblock" both hold
}

class block_delta_import : public ::testing::Test {
protected:
  test::temp_state state;
  block_backend b{state.path()};
  volume_record base = snapshot_record("mon", "2026-12-07T10:00:00Z");
  volume_record volume = make_record("restored", image_bytes);
  std::string base_image = b.image_path(record_kind::snapshot, "mon");
  std::string volume_image = b.image_path(record_kind::volume, "restored");
  std::string source = state.path() + "/source.img"; ///< the volume the delta is of, now
  std::string spool = state.path() + "/delta";

  static volume_record snapshot_record(const std::string& name, const std::string& at) {
    auto rec = make_record(name, image_bytes);
    rec.kind = record_kind::snapshot;
    rec.created_at = at;
    return rec;
  }

  void SetUp() override {
    make_image(base_image);
    make_image(volume_image);
    make_image(source);
    write_at(source, 4096, "changed superblock");
    write_at(source, 3 * mib, std::string(70000, 'n'));
  }

  /// The delta of `source` since `base` (the ranges given), written to the spool.
  void write_delta(std::vector<byte_range> ranges = {{0, 65536}, {3 * mib, 131072}},
                   uint64_t size = image_bytes) {
    delta_header h;
    h.volume = "data";
    h.base = base.name;
    h.base_created_at = base.created_at;
    h.base_size_bytes = image_bytes;
    h.size_bytes = size;
    std::ofstream out{spool, std::ios::binary | std::ios::trunc};
    delta_writer w{[&out](const char* data, size_t n) {
      out.write(data, static_cast<std::streamsize>(n));
      return static_cast<bool>(out);
    }};
    int fd = ::open(source.c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_TRUE(w.header(h));
    for (const auto& r : ranges) {
      auto put = w.range(r, fd);
      ASSERT_TRUE(put && *put);
    }
    ASSERT_TRUE(w.end());
    ::close(fd);
  }

  /// No temp copy is left beside the volume's image.
  bool no_temp_left() const {
    for (const auto& e : fs::directory_iterator(fs::path(volume_image).parent_path())) {
      if (e.path() != volume_image) {
        ADD_FAILURE() << "left beside the image: " << e.path();
        return false;
      }
    }
    return true;
  }
};

TEST_F(block_delta_import, a_delta_onto_its_base_gives_the_volume_byte_for_byte) {
  write_delta();
  ASSERT_FALSE(b.apply_delta(volume, base, spool));
  EXPECT_TRUE(read_file(volume_image) == read_file(source)) << "the restored image is the source";
  EXPECT_TRUE(no_temp_left());
}

TEST_F(block_delta_import, a_volume_that_is_not_its_base_is_refused_and_unchanged) {
  write_delta();
  write_at(volume_image, 2 * mib, "mounted since");
  const auto before = read_file(volume_image);
  auto err = b.apply_delta(volume, base, spool);
  ASSERT_TRUE(err);
  EXPECT_EQ(code_of(err), ec::failed_precondition);
  EXPECT_TRUE(mentions(err,
                       "volume \"restored\" does not hold snapshot \"mon\"'s bytes (they "
                       "differ first at byte 2097152)"))
    << describe(err);
  EXPECT_TRUE(mentions(err, "-o from-snapshot=mon")) << describe(err);
  EXPECT_TRUE(read_file(volume_image) == before);
  EXPECT_TRUE(no_temp_left());
}

TEST_F(block_delta_import, another_base_a_damaged_delta_or_a_resize_is_refused_and_unchanged) {
  const auto before = read_file(volume_image);
  write_delta();
  auto retaken = snapshot_record("mon", "2026-12-07T11:00:00Z"); // deleted and taken again
  auto other = b.apply_delta(volume, retaken, spool);
  ASSERT_TRUE(other);
  EXPECT_EQ(code_of(other), ec::failed_precondition);
  EXPECT_TRUE(mentions(other,
                       "(taken at 2026-12-07T10:00:00Z) is not since snapshot \"mon\" "
                       "(taken at 2026-12-07T11:00:00Z)"))
    << describe(other);

  auto damaged = read_file(spool);
  damaged[damaged.size() - 100] ^= 1; // the last range's: written to the copy, then refused

  std::ofstream{spool, std::ios::binary | std::ios::trunc} << damaged;
  auto bad = b.apply_delta(volume, base, spool);
  ASSERT_TRUE(bad);
  EXPECT_EQ(code_of(bad), ec::invalid_argument);
  EXPECT_TRUE(mentions(bad, "does not match its SHA-256")) << describe(bad);
  EXPECT_TRUE(read_file(volume_image) == before) << "the copy went, the image stayed";

  write_delta({{0, 65536}}, image_bytes + mib);
  auto grown = b.apply_delta(volume, base, spool);
  ASSERT_TRUE(grown);
  EXPECT_EQ(code_of(grown), ec::failed_precondition);
  EXPECT_TRUE(mentions(grown, "was resized from 4194304 to 5242880 bytes")) << describe(grown);
  EXPECT_TRUE(read_file(volume_image) == before);
  EXPECT_TRUE(no_temp_left());
}

} // namespace
} // namespace berth
