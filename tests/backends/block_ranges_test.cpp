// The block map of snapshot images (backends/block_ranges.hpp): allocated ranges from
// SEEK_DATA/SEEK_HOLE and deltas between two images, on real sparse files, paged and
// resumed; and the same deltas on xfs with reflinked copies, where unchanged blocks share
// their extents (real loop device; skipped loudly without root).

#include "backends/block_ranges.hpp"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include "backends/helper_process.hpp"
#include "core/errors.hpp"
#include "loop_fixture.hpp"
#include "temp_state.hpp"

namespace berth {
namespace {

constexpr uint64_t kib = 1024;
constexpr uint64_t mib = 1024 * kib;

/// Writes `len` bytes of `byte` at `pos` of `path` (created, never truncated).
void write_at(const std::string& path, uint64_t pos, uint64_t len, char byte) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0) << path;
  std::vector<char> data(len, byte);
  ASSERT_EQ(::pwrite(fd, data.data(), len, static_cast<off_t>(pos)), static_cast<ssize_t>(len));
  ::close(fd);
}

/// Sets the size of `path`, created empty when it is not there.
void set_size(const std::string& path, uint64_t size) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(size)), 0) << path;
  ::close(fd);
}

void punch_hole(const std::string& path, uint64_t pos, uint64_t len) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0) << path;
  ASSERT_EQ(::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(pos),
                        static_cast<off_t>(len)),
            0);
  ::close(fd);
}

image_map open_image(const std::string& path) {
  auto m = image_map::open(path);
  EXPECT_TRUE(m) << describe(m.error());
  return std::move(*m);
}

/// Every range from `from` on, a page of `max` at a time, each page resumed where the
/// last one said; checks the pages' order and that none overlaps the one before.
template <class Page>
std::vector<byte_range> all_pages(Page page, uint64_t from, size_t max) {
  std::vector<byte_range> all;
  for (int pages = 0; pages < 10000; ++pages) {
    auto p = page(from, max);
    EXPECT_TRUE(p) << describe(p.error());
    if (!p) {
      break;
    }
    EXPECT_LE(p->ranges.size(), max);
    for (const auto& r : p->ranges) {
      EXPECT_GT(r.length, 0u);
      EXPECT_GE(r.offset, from) << "a range starts before the page's starting offset";
      if (!all.empty()) {
        EXPECT_GT(r.offset, all.back().end() - 1) << "ranges overlap or go backwards";
      }
      all.push_back(r);
    }
    if (p->done) {
      break;
    }
    EXPECT_GT(p->next, from) << "a page that does not move on";
    from = p->next;
  }
  return all;
}

/// A page reader of the delta from `base` to `target`.
auto delta_of(const image_map& base, const image_map& target) {
  return [&](uint64_t from, size_t max) { return changed_ranges(base, target, from, max); };
}

class block_ranges_test : public ::testing::Test {
protected:
  test::temp_state state;
  std::string dir() const { return state.path(); }
};

TEST_F(block_ranges_test, allocated_ranges_are_the_written_extents_paged_and_resumed) {
  auto path = dir() + "/snap.img";
  write_at(path, 0, 4 * kib, 'a');
  write_at(path, 1 * mib, 128 * kib, 'b');
  write_at(path, 4 * mib - 4 * kib, 4 * kib, 'c');
  auto img = open_image(path);
  ASSERT_EQ(img.size(), 4 * mib);
  std::vector<byte_range> written{{0, 4 * kib}, {1 * mib, 128 * kib}, {4 * mib - 4 * kib, 4 * kib}};
  auto allocated = [&](uint64_t from, size_t max) { return img.allocated(from, max); };
  EXPECT_EQ(all_pages(allocated, 0, 100), written);
  EXPECT_EQ(all_pages(allocated, 0, 1), written) << "one range per page";
  // Resumed inside a range: it starts at the offset asked.
  std::vector<byte_range> rest{{1 * mib + 64 * kib, 64 * kib}, {4 * mib - 4 * kib, 4 * kib}};
  EXPECT_EQ(all_pages(allocated, 1 * mib + 64 * kib, 100), rest);
  // At the end: nothing, and done.
  auto end = img.allocated(4 * mib, 10);
  ASSERT_TRUE(end);
  EXPECT_TRUE(end->ranges.empty());
  EXPECT_TRUE(end->done);
}

TEST_F(block_ranges_test, an_unwritten_image_has_no_allocated_range_and_no_delta) {
  auto a = dir() + "/a.img";
  auto b = dir() + "/b.img";
  set_size(a, 0);
  set_size(b, 0);
  set_size(a, 8 * mib);
  set_size(b, 8 * mib);
  auto base = open_image(a);
  auto target = open_image(b);
  auto page = base.allocated(0, 10);
  ASSERT_TRUE(page);
  EXPECT_TRUE(page->ranges.empty());
  EXPECT_TRUE(page->done);
  EXPECT_TRUE(all_pages(delta_of(base, target), 0, 10).empty());
}

TEST_F(block_ranges_test, the_delta_is_every_changed_block_and_nothing_else) {
  auto a = dir() + "/base.img";
  auto b = dir() + "/target.img";
  for (const auto& p : {a, b}) {
    set_size(p, 0);
    write_at(p, 0, 2 * mib, 'x'); // the same data in both
    set_size(p, 8 * mib);
  }
  write_at(b, 200 * kib, 4 * kib, 'y');          // inside the block [192K, 256K)
  write_at(b, 1 * mib + 60 * kib, 8 * kib, 'y'); // across two blocks
  write_at(b, 512 * kib, 64 * kib, 'x');         // rewritten with the same bytes: no change
  punch_hole(b, 1536 * kib, 128 * kib);          // data in the base, zeros in the target
  write_at(b, 6 * mib, 4 * kib, 'z');            // where the base has a hole
  set_size(b, 10 * mib);                         // grown: written past the base's end
  write_at(b, 9 * mib, 4 * kib, 'w');
  auto base = open_image(a);
  auto target = open_image(b);
  std::vector<byte_range> want{
    {192 * kib, 64 * kib},   {1 * mib, 128 * kib}, // the blocks [1M, 1M+64K) and [1M+64K, 1M+128K), merged
    {1536 * kib, 128 * kib}, {6 * mib, 64 * kib},  {9 * mib, 64 * kib},
  };
  EXPECT_EQ(all_pages(delta_of(base, target), 0, 100), want);
  EXPECT_EQ(all_pages(delta_of(base, target), 0, 1), want) << "one range per page";
  // Resumed inside a changed run: it starts at the offset asked.
  std::vector<byte_range> rest{{1 * mib + 100 * kib, 28 * kib},
                               {1536 * kib, 128 * kib},
                               {6 * mib, 64 * kib},
                               {9 * mib, 64 * kib}};
  EXPECT_EQ(all_pages(delta_of(base, target), 1 * mib + 100 * kib, 100), rest);
}

TEST_F(block_ranges_test, the_last_block_of_an_image_not_a_multiple_of_the_block_is_clipped) {
  auto a = dir() + "/base.img";
  auto b = dir() + "/target.img";
  set_size(a, 0);
  set_size(b, 0);
  set_size(a, 1 * mib + 4 * kib);
  set_size(b, 1 * mib + 4 * kib);
  write_at(b, 1 * mib, 4 * kib, 'q');
  auto base = open_image(a);
  auto target = open_image(b);
  std::vector<byte_range> want{{1 * mib, 4 * kib}};
  EXPECT_EQ(all_pages(delta_of(base, target), 0, 10), want);
}

TEST_F(block_ranges_test, a_missing_image_is_not_found) {
  auto m = image_map::open(dir() + "/none.img");
  ASSERT_FALSE(m);
  EXPECT_TRUE(is(m.error(), ec::not_found)) << describe(m.error());
}

/// xfs with reflink on a loop device: copies made by `cp --reflink=always` share every
/// extent until one is written.
class block_ranges_reflink_test : public loop_test::loop_fixture {
protected:
  void SetUp() override {
    loop_fixture::SetUp();
    if (IsSkipped()) {
      return;
    }
    auto image = loop_test::make_image(dir_, "xfs.img", static_cast<off_t>(512 * mib));
    auto made = run_helper_checked({"mkfs.xfs", "-q", "-m", "reflink=1", image},
                                   std::chrono::seconds(60), "mkfs.xfs");
    if (!made) {
      std::cerr << "\n***** SKIPPED: mkfs.xfs -m reflink=1 failed: " << describe(made.error())
                << " *****\n\n";
      GTEST_SKIP() << "SKIPPED: no xfs with reflink";
    }
    mnt_ = dir_ + "/mnt";
    std::filesystem::create_directory(mnt_);
    auto mounted =
      run_helper_checked({"mount", "-o", "loop", image, mnt_}, std::chrono::seconds(60), "mount");
    ASSERT_TRUE(mounted) << describe(mounted.error());
  }
  void TearDown() override {
    if (!mnt_.empty()) {
      ::umount2(mnt_.c_str(), MNT_DETACH);
    }
    loop_fixture::TearDown();
  }
  std::string mnt_;
};

TEST_F(block_ranges_reflink_test, reflinked_snapshots_differ_only_in_the_blocks_written) {
  auto volume = mnt_ + "/volume.img";
  set_size(volume, 0);
  for (uint64_t at = 0; at < 32 * mib; at += 1 * mib) {
    write_at(volume, at, 1 * mib, static_cast<char>('a' + at / mib));
  }
  set_size(volume, 64 * mib);
  auto base_path = mnt_ + "/base.img";
  auto copied = run_helper_checked({"cp", "--reflink=always", volume, base_path},
                                   std::chrono::seconds(60), "cp");
  ASSERT_TRUE(copied) << describe(copied.error());
  write_at(volume, 5 * mib + 4 * kib, 4 * kib, 'Z');
  write_at(volume, 40 * mib, 64 * kib, 'Y');
  auto target_path = mnt_ + "/target.img";
  copied = run_helper_checked({"cp", "--reflink=always", volume, target_path},
                              std::chrono::seconds(60), "cp");
  ASSERT_TRUE(copied) << describe(copied.error());
  ::sync();
  auto base = open_image(base_path);
  auto target = open_image(target_path);
  std::vector<byte_range> want{{5 * mib, 64 * kib}, {40 * mib, 64 * kib}};
  EXPECT_EQ(all_pages(delta_of(base, target), 0, 100), want);
  EXPECT_EQ(all_pages(delta_of(base, target), 0, 1), want);
  // Only the written blocks were read: the 32 MiB the copies share were not.
  delta_cost cost;
  auto page = changed_ranges(base, target, 0, 100, &cost);
  ASSERT_TRUE(page);
  EXPECT_EQ(page->ranges, want);
  EXPECT_EQ(cost.shared_blocks, 32 * mib / delta_block_bytes - 1);
  EXPECT_EQ(cost.read_blocks, 2u);
}

} // namespace
} // namespace berth
