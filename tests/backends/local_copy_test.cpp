// The local backend's copies of plain directory volumes: a snapshot and a volume made
// from it or from another volume keep content, owners, modes, hard links, symlinks,
// fifos and sparse files; a copy of a mounted volume says it is crash-consistent only;
// what cannot be copied is refused before anything is made; a copy is never half-made.

#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>
#include <cstdlib>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backends/detail/tree_copy.hpp"
#include "backends/local_backend.hpp"
#include "tests/backends/local_backend_fixture.hpp"
#include "tests/support/latch.hpp"

namespace fs = std::filesystem;

namespace berth {
namespace {

using namespace test;

volume_record copy_record(const std::string& name, record_kind kind, content_source source) {
  auto rec = make_record(name);
  rec.kind = kind;
  rec.source = std::move(source);
  return rec;
}

struct stat stat_of(const fs::path& p) {
  struct stat st {};
  EXPECT_EQ(::lstat(p.c_str(), &st), 0) << p;
  return st;
}

/// A log sink that counts `latch` down at the first line holding `needle`.
class line_sink : public spdlog::sinks::base_sink<std::mutex> {
public:
  line_sink(std::string needle, test::latch& latch) : needle_(std::move(needle)), latch_(latch) {
  }

protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (!seen_ && std::string_view{msg.payload.data(), msg.payload.size()}.find(needle_)
                    != std::string_view::npos) {
      seen_ = true;
      latch_.count_down();
    }
  }
  void flush_() override {
  }

private:
  std::string needle_;
  test::latch& latch_;
  bool seen_ = false;
};

class local_copy_test : public local_backend_test {
protected:
  /// A volume v1 whose data/ holds one of each kind of file the copy must keep.
  fs::path make_source() {
    auto rec = make_record("v1");
    EXPECT_FALSE(backend_->create(rec));
    fs::path data = backend_->volume_dir("v1") + "/data";
    std::ofstream(data / "file") << "hello";
    EXPECT_EQ(::chown((data / "file").c_str(), 1000, 1001), 0);
    EXPECT_EQ(::chmod((data / "file").c_str(), 0640), 0);
    EXPECT_EQ(::link((data / "file").c_str(), (data / "hard").c_str()), 0);
    fs::create_symlink("file", data / "link");
    EXPECT_EQ(::mkfifo((data / "fifo").c_str(), 0600), 0);
    {
      std::ofstream sparse(data / "sparse");
      sparse.seekp(64 << 20);
      sparse << "end";
    }
    return data;
  }
};

TEST_F(local_copy_test, a_snapshot_and_a_volume_from_it_keep_every_kind_of_file) {
  make_source();
  auto snap = copy_record("s1", record_kind::snapshot, volume_source("v1"));
  auto consistency = backend_->create_copy(snap);
  ASSERT_TRUE(consistency) << describe(consistency.error());
  EXPECT_EQ(*consistency, "") << "v1 was never mounted: nothing could write during the copy";
  auto restored = copy_record("r1", record_kind::volume, snapshot_source("s1"));
  ASSERT_TRUE(backend_->create_copy(restored));
  for (const fs::path& data : {fs::path(backend_->snapshot_dir("s1")) / "data",
                              fs::path(backend_->volume_dir("r1")) / "data"}) {
    EXPECT_EQ(read_text(data / "file"), "hello") << data;
    auto file = stat_of(data / "file");
    EXPECT_EQ(file.st_uid, 1000u);
    EXPECT_EQ(file.st_gid, 1001u);
    EXPECT_EQ(file.st_mode & 07777, 0640u);
    EXPECT_EQ(file.st_nlink, 2u);
    EXPECT_EQ(stat_of(data / "hard").st_ino, file.st_ino) << "a hard link stays one file";
    EXPECT_EQ(fs::read_symlink(data / "link"), "file");
    EXPECT_TRUE(S_ISFIFO(stat_of(data / "fifo").st_mode));
    auto sparse = stat_of(data / "sparse");
    EXPECT_EQ(sparse.st_size, (64 << 20) + 3);
    EXPECT_LT(sparse.st_blocks * 512, 1 << 20) << "the hole stays a hole";
  }
  EXPECT_TRUE(fs::is_directory(backend_->volume_dir("r1") + "/mnt"));
  EXPECT_EQ(stat_of(state_.path() + "/snapshots").st_mode & 07777, 0700u)
    << "nobody but berthd reaches a snapshot";
  EXPECT_FALSE(fs::exists(backend_->snapshot_dir("s1") + "/mnt")) << "a snapshot is never mounted";
  // The snapshot outlives its volume.
  ASSERT_FALSE(backend_->remove(make_record("v1")));
  EXPECT_EQ(read_text(fs::path(backend_->snapshot_dir("s1")) / "data/file"), "hello");
  ASSERT_FALSE(backend_->remove(snap));
  EXPECT_FALSE(fs::exists(backend_->snapshot_dir("s1")));
}

TEST_F(local_copy_test, a_copy_of_a_mounted_volume_says_it_is_crash_consistent_only) {
  make_source();
  auto rec = make_record("v1");
  ASSERT_TRUE(backend_->mount(rec));
  auto clone = copy_record("c1", record_kind::volume, volume_source("v1"));
  auto consistency = backend_->create_copy(clone);
  ASSERT_TRUE(consistency) << describe(consistency.error());
  EXPECT_EQ(*consistency, copy_crash_consistent);
  ASSERT_FALSE(backend_->unmount(rec, false));
  // Mounted and unmounted again before the copy begins: idle for the whole copy (one that
  // comes and goes during it is the next test's).
  auto snap = copy_record("s1", record_kind::snapshot, volume_source("v1"));
  ASSERT_TRUE(backend_->mount(rec));
  ASSERT_FALSE(backend_->unmount(rec, false));
  auto idle = backend_->create_copy(snap);
  ASSERT_TRUE(idle);
  EXPECT_EQ(*idle, "") << "the mount ended before the copy began";
}

TEST_F(local_copy_test, a_mount_that_comes_and_goes_during_the_copy_is_seen) {
  make_source();
  const auto hold = state_.path() + "/hold";
  std::ofstream(hold) << "held";
  ::setenv("BERTH_TEST_HOLD_AT", ("dir-copy-made:" + hold).c_str(), 1);
  auto snap = copy_record("s1", record_kind::snapshot, volume_source("v1"));
  // Held once the tree is copied: the hold point says so in the log.
  test::latch held{1};
  auto sink = std::make_shared<line_sink>("holding at step dir-copy-made", held);
  auto previous = spdlog::default_logger();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("test", sink));
  caf::expected<std::string> copied{std::string{}};
  std::thread copy([&] { copied = backend_->create_copy(snap); });
  EXPECT_TRUE(held.wait_for(std::chrono::seconds(30))) << "the copy never reached its hold";
  auto rec = make_record("v1");
  EXPECT_TRUE(backend_->mount(rec));
  EXPECT_FALSE(backend_->unmount(rec, false)); // gone again before the copy ends
  fs::remove(hold); // released; joined below in every case
  copy.join();
  ::unsetenv("BERTH_TEST_HOLD_AT");
  spdlog::set_default_logger(previous);
  ASSERT_TRUE(copied) << describe(copied.error());
  EXPECT_EQ(*copied, copy_crash_consistent)
    << "a container may have written while it had the volume, though mountinfo shows none";
}

TEST_F(local_copy_test, a_copy_left_by_one_source_is_never_handed_to_another_or_to_a_create) {
  make_source();
  auto other = make_record("v3");
  ASSERT_FALSE(backend_->create(other));
  std::ofstream(backend_->volume_dir("v3") + "/data/file") << "v3's";
  // A clone of v1 whose caller gave up: no record holds it.
  ASSERT_TRUE(backend_->create_copy(copy_record("c1", record_kind::volume, volume_source("v1"))));
  auto again = backend_->create_copy(copy_record("c1", record_kind::volume, volume_source("v3")));
  ASSERT_TRUE(again) << describe(again.error());
  EXPECT_EQ(read_text(fs::path(backend_->volume_dir("c1")) / "data/file"), "v3's")
    << "a clone of v3 holds v3's files, not what v1's left";
  ASSERT_FALSE(backend_->create(make_record("c1")));
  EXPECT_TRUE(fs::is_empty(backend_->volume_dir("c1") + "/data"))
    << "a plain create of the name is an empty volume";
}

TEST_F(local_copy_test, an_export_reads_a_copy_that_goes_when_it_is_closed) {
  make_source();
  auto rec = make_record("v1");
  auto view = backend_->open_export(rec, "0123abcd");
  ASSERT_TRUE(view) << describe(view.error());
  EXPECT_EQ(view->consistency, "");
  EXPECT_EQ(read_text(fs::path(view->path) / "file"), "hello");
  EXPECT_EQ(fs::path(view->path).parent_path(), fs::path(state_.path() + "/exports/0123abcd"));
  EXPECT_EQ(stat_of(state_.path() + "/exports").st_mode & 07777, 0700u);
  ASSERT_FALSE(backend_->close_export(rec, "0123abcd"));
  EXPECT_FALSE(fs::exists(state_.path() + "/exports/0123abcd"));
  EXPECT_FALSE(backend_->close_export(rec, "0123abcd")) << "closed twice is closed";
  auto bad = backend_->open_export(rec, "../x");
  ASSERT_FALSE(bad) << "an id is a name of berth's, never a path";
  EXPECT_EQ(code_of(bad.error()), ec::invalid_argument);
}

TEST_F(local_copy_test, an_import_moves_its_tree_into_place_with_the_root_it_asks) {
  const auto tree = state_.path() + "/imports/i1/data";
  fs::create_directories(tree);
  std::ofstream(tree + "/file") << "imported";
  auto rec = make_record("v2", {{"uid", "1000"}, {"gid", "1001"}, {"mode", "0750"}});
  ASSERT_FALSE(backend_->create_from_tree(rec, tree));
  const auto data = fs::path(backend_->volume_dir("v2")) / "data";
  EXPECT_EQ(read_text(data / "file"), "imported");
  EXPECT_FALSE(fs::exists(tree)) << "moved, not copied";
  auto root = stat_of(data);
  EXPECT_EQ(root.st_uid, 1000u);
  EXPECT_EQ(root.st_gid, 1001u);
  EXPECT_EQ(root.st_mode & 07777, 0750u);
  EXPECT_TRUE(fs::is_directory(backend_->volume_dir("v2") + "/mnt"));
  auto typed = make_record("v3", {{"type", "tmpfs"}, {"device", "tmpfs"}});
  EXPECT_TRUE(backend_->create_from_tree(typed, tree));
}

TEST_F(local_copy_test, a_retried_copy_keeps_the_first_and_does_not_vouch_for_it) {
  make_source();
  auto snap = copy_record("s1", record_kind::snapshot, volume_source("v1"));
  ASSERT_TRUE(backend_->create_copy(snap));
  std::ofstream(backend_->volume_dir("v1") + "/data/file") << "changed";
  auto again = backend_->create_copy(snap);
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, copy_crash_consistent) << "how the first copy went is not known now";
  EXPECT_EQ(read_text(fs::path(backend_->snapshot_dir("s1")) / "data/file"), "hello");
}

TEST_F(local_copy_test, only_a_plain_directory_volume_is_copied) {
  auto tmpfs = make_record("t1", {{"type", "tmpfs"}, {"device", "tmpfs"}});
  auto err = backend_->check_copy_source(tmpfs);
  ASSERT_TRUE(err);
  EXPECT_EQ(code_of(err), ec::unsupported);
  EXPECT_NE(describe(err).find("volume t1 is not a plain directory volume"), std::string::npos)
    << describe(err);
  EXPECT_NE(describe(err).find("-o backend=block"), std::string::npos) << describe(err);
  auto imported = make_record("e1");
  imported.mountpoint = "/var/lib/ecs/volumes/e1";
  EXPECT_TRUE(backend_->check_copy_source(imported));
  EXPECT_FALSE(backend_->check_copy_source(make_record("v1")));
  auto mounted = make_record("v1");
  mounted.mountpoint = backend_->volume_dir("v1") + "/mnt"; // what a mounted record holds
  EXPECT_FALSE(backend_->check_copy_source(mounted));
  // A copy's options: no type, no owner of its own.
  EXPECT_FALSE(backend_->validate("c1", {{"clone-of", "v1"}}));
  auto typed = backend_->validate("c1", {{"clone-of", "v1"}, {"type", "tmpfs"}});
  ASSERT_TRUE(typed);
  EXPECT_NE(describe(typed).find("option clone-of of volume c1"), std::string::npos);
  auto owned = backend_->validate("c1", {{"from-snapshot", "s1"}, {"uid", "1000"}});
  ASSERT_TRUE(owned);
  EXPECT_NE(describe(owned).find("keeps its source's owner"), std::string::npos);
}

TEST_F(local_copy_test, a_missing_source_leaves_nothing_behind) {
  auto snap = copy_record("s1", record_kind::snapshot, volume_source("nothere"));
  auto copied = backend_->create_copy(snap);
  ASSERT_FALSE(copied);
  EXPECT_EQ(code_of(copied.error()), ec::not_found);
  EXPECT_NE(describe(copied.error()).find("volume:nothere"), std::string::npos);
  EXPECT_FALSE(fs::exists(backend_->snapshot_dir("s1")));
  auto bad = copy_record("s2", record_kind::snapshot, snapshot_source("s1"));
  auto refused = backend_->create_copy(bad);
  ASSERT_FALSE(refused);
  EXPECT_EQ(code_of(refused.error()), ec::invalid_argument);
}

TEST_F(local_copy_test, a_mount_inside_the_volume_is_not_copied) {
  make_source();
  auto data = fs::path(backend_->volume_dir("v1")) / "data";
  fs::create_directory(data / "sub");
  ASSERT_EQ(::mount("tmpfs", (data / "sub").c_str(), "tmpfs", 0, "size=1m"), 0);
  std::ofstream(data / "sub" / "inner") << "x";
  auto snap = copy_record("s1", record_kind::snapshot, volume_source("v1"));
  auto copied = backend_->create_copy(snap);
  ASSERT_EQ(::umount2((data / "sub").c_str(), MNT_DETACH), 0);
  ASSERT_TRUE(copied) << describe(copied.error());
  EXPECT_TRUE(fs::is_directory(fs::path(backend_->snapshot_dir("s1")) / "data/sub"));
  EXPECT_FALSE(fs::exists(fs::path(backend_->snapshot_dir("s1")) / "data/sub/inner"));
}

TEST_F(local_copy_test, a_copy_that_fails_leaves_no_temp_directory) {
  make_source();
  {
    std::ofstream big(backend_->volume_dir("v1") + "/data/big");
    big << std::string(1 << 20, 'x'); // written, not sparse: it needs 1 MiB where it goes
  }
  const auto snapshots = state_.path() + "/snapshots";
  fs::create_directories(snapshots);
  ASSERT_EQ(::mount("tmpfs", snapshots.c_str(), "tmpfs", 0, "size=256k"), 0);
  auto snap = copy_record("s1", record_kind::snapshot, volume_source("v1"));
  auto copied = backend_->create_copy(snap);
  ASSERT_FALSE(copied) << "256 KiB cannot hold the copy";
  EXPECT_EQ(code_of(copied.error()), ec::backend_failure);
  EXPECT_NE(describe(copied.error()).find("snapshot s1: copy of"), std::string::npos)
    << describe(copied.error());
  EXPECT_TRUE(fs::is_empty(snapshots)) << "neither the copy nor its temp directory is left";
  ASSERT_EQ(::umount2(snapshots.c_str(), MNT_DETACH), 0);
}

} // namespace
} // namespace berth
