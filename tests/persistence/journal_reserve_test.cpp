// A full filesystem does not stop the journal (docs/design.md, "Durable state"). The
// store keeps a preallocated reserve; on ENOSPC it releases part of it, retries, and
// grows it back later.

#include "persistence/file_store.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <unistd.h>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "records.hpp"
#include "small_fs.hpp"

namespace berth {
namespace {

using test::make_record;
using test::put;
using test::small_fs;

namespace fs = std::filesystem;

constexpr uint64_t reserve_bytes = uint64_t{4} << 20;

uint64_t allocated(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_blocks) * 512 : 0;
}

TEST(journal_reserve, is_made_at_load) {
  small_fs disk{16};
  if (!disk.ok()) {
    GTEST_SKIP() << disk.why();
  }
  auto dir = disk.path() + "/state";
  file_store st{dir, reserve_bytes};
  ASSERT_TRUE(st.load());
  EXPECT_EQ(allocated(dir + "/reserve"), reserve_bytes) << "the reserve is preallocated";
}

TEST(journal_reserve, a_full_filesystem_still_takes_appends_and_compactions) {
  small_fs disk{16};
  if (!disk.ok()) {
    GTEST_SKIP() << disk.why();
  }
  auto dir = disk.path() + "/state";
  state_snapshot state;
  {
    file_store st{dir, reserve_bytes};
    ASSERT_TRUE(st.load());
    for (auto name : {"a", "b", "c"}) {
      ASSERT_FALSE(st.append({put(make_record(name, 2))}));
      state.volumes[name] = make_record(name, 2);
    }
    ASSERT_GT(disk.fill("filler"), 0u);
    // A volume filled the filesystem: the journal still records its unmounts (records
    // larger than a page, so they need new blocks).
    for (auto name : {"a", "b"}) {
      auto rec = make_record(name);
      rec.options["o"] = std::string(16 << 10, 'x');
      auto err = st.append({put(rec)});
      ASSERT_FALSE(err) << describe(err);
      state.volumes[name] = rec;
    }
    EXPECT_LT(allocated(dir + "/reserve"), reserve_bytes) << "part of the reserve was used";
    auto err = st.compact(state);
    ASSERT_FALSE(err) << "compaction on a full filesystem: " << describe(err);
    err = st.append({put(make_record("c"))});
    ASSERT_FALSE(err) << describe(err);
    state.volumes["c"] = make_record("c");
  }
  {
    // berthd restarts on the full filesystem: its start-up compaction works.
    file_store st{dir, reserve_bytes};
    auto loaded = st.load();
    ASSERT_TRUE(loaded) << describe(loaded.error());
    EXPECT_EQ(loaded->volumes, state.volumes);
    auto err = st.compact(*loaded);
    ASSERT_FALSE(err) << describe(err);
    ASSERT_FALSE(st.append({test::erase("c")}));
    state.volumes.erase("c");
  }
  file_store st{dir, reserve_bytes};
  auto loaded = st.load();
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded->volumes, state.volumes);
}

TEST(journal_reserve, grows_back_once_space_is_freed) {
  small_fs disk{16};
  if (!disk.ok()) {
    GTEST_SKIP() << disk.why();
  }
  auto dir = disk.path() + "/state";
  file_store st{dir, reserve_bytes};
  ASSERT_TRUE(st.load());
  disk.fill("filler");
  ASSERT_FALSE(st.append({put(make_record("a", 1))}));
  ASSERT_LT(allocated(dir + "/reserve"), reserve_bytes);
  fs::remove(disk.path() + "/filler");
  ASSERT_FALSE(st.compact(state_snapshot{}));
  EXPECT_EQ(allocated(dir + "/reserve"), reserve_bytes);
}

TEST(journal_reserve, without_one_a_full_filesystem_fails_the_append_and_cuts_it_back) {
  small_fs disk{16};
  if (!disk.ok()) {
    GTEST_SKIP() << disk.why();
  }
  auto dir = disk.path() + "/state";
  file_store st{dir, 0};
  ASSERT_TRUE(st.load());
  ASSERT_FALSE(st.append({put(make_record("a", 1))}));
  auto good = st.journal_bytes();
  EXPECT_FALSE(fs::exists(dir + "/reserve"));
  disk.fill("filler");
  auto big = make_record("big");
  big.options["o"] = std::string(64 << 10, 'x');
  auto err = st.append({put(big)});
  ASSERT_TRUE(err);
  EXPECT_NE(describe(err).find("No space"), std::string::npos) << describe(err);
  EXPECT_EQ(st.journal_bytes(), good);
}

} // namespace
} // namespace berth
