// The start-up sweep of directory copies no record holds (copy_sweep.cpp): which entries
// it chooses, and on disk that it deletes a temp copy and an unrecorded marked copy, keeps
// a recorded one and any directory it did not copy, and never descends into a mount.

#include "persistence/recovery/copy_sweep.hpp"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <sys/mount.h>

#include "backends/detail/tree_copy.hpp"
#include "persistence/recovery/image_sweep.hpp"
#include "tests/backends/temp_state.hpp"

using namespace berth;
namespace fs = std::filesystem;

namespace {

volume_record record(const std::string& name, record_kind kind = record_kind::volume,
                     std::string backend = "local") {
  volume_record rec;
  rec.name = name;
  rec.backend = std::move(backend);
  rec.kind = kind;
  return rec;
}

/// How many mounts lie at `path`.
size_t mounts_of(const fs::path& path) {
  std::ifstream in("/proc/self/mountinfo");
  std::string line;
  size_t n = 0;
  while (std::getline(in, line)) {
    n += line.find(" " + path.string() + " ") != std::string::npos ? 1 : 0;
  }
  return n;
}

/// STATE/ROOT/NAME with data/file, and the copy marker when `marked` (made under the
/// state `made_under`).
fs::path make_dir(const std::string& state, const std::string& root, const std::string& name,
                  bool marked, const std::string& made_under = "") {
  fs::path dir = fs::path(state) / root / name;
  fs::create_directories(dir / "data");
  std::ofstream(dir / "data/file") << "x";
  if (marked) {
    std::ofstream(dir / detail::copy_marker) << "volume:src\n" << made_under << "\n";
  }
  return dir;
}

} // namespace

TEST(copy_sweep, chooses_temp_copies_and_marked_copies_of_this_state_no_record_holds) {
  state_snapshot state;
  state.volumes["kept"] = record("kept");
  state.volumes["snap"] = record("snap", record_kind::snapshot);
  state.volumes["img"] = record("img", record_kind::volume, "block");
  const std::string me = "0123";
  std::vector<copy_entry> volumes{{"kept", true, me},       {"plain", false, ""},
                                  {"orphan", true, me},     {"snap", true, me},
                                  {".x.tmp.9.1", false, ""}, {"img", true, me},
                                  {".hidden", true, me},    {"other-state", true, "4567"},
                                  {"no-state", true, ""}};
  EXPECT_EQ(copies_to_sweep(state, record_kind::volume, volumes, me),
            (std::vector<std::string>{"orphan", "snap", ".x.tmp.9.1", "img"}))
    << "plain was not copied; snap is a snapshot's name, img a block volume's; .hidden is "
       "no name berth gives; other-state and no-state were not made under this state";
  std::vector<copy_entry> snapshots{{"snap", true, me}, {"kept", true, me}, {"unmarked", false, ""}};
  EXPECT_EQ(copies_to_sweep(state, record_kind::snapshot, snapshots, me),
            (std::vector<std::string>{"kept"}));
  EXPECT_TRUE(copies_to_sweep(state, record_kind::snapshot, snapshots, "").empty())
    << "without an identity of its own, a state deletes no copy";
}

TEST(copy_sweep, deletes_orphans_and_keeps_what_a_record_or_no_copy_made) {
  BERTH_REQUIRE_ROOT();
  test::temp_state state;
  const auto me = state_instance(state.path());
  ASSERT_EQ(me.size(), 32u);
  state_snapshot records;
  records.volumes["held"] = record("held");
  records.volumes["s1"] = record("s1", record_kind::snapshot);
  auto held = make_dir(state.path(), "volumes", "held", true, me);
  auto plain = make_dir(state.path(), "volumes", "plain", false);
  auto orphan = make_dir(state.path(), "volumes", "orphan", true, me);
  auto foreign = make_dir(state.path(), "volumes", "foreign", true, "another-state");
  auto temp = make_dir(state.path(), "volumes", ".c1.tmp.12.3", false);
  auto snapshot = make_dir(state.path(), "snapshots", "s1", true, me);
  auto lost = make_dir(state.path(), "snapshots", "s2", true, me);
  auto busy = make_dir(state.path(), "snapshots", "s3", true, me);
  ASSERT_EQ(::mount("tmpfs", (busy / "data").c_str(), "tmpfs", 0, "size=1m"), 0);
  std::ofstream(busy / "data/inside") << "y";

  auto report = sweep_local_copies(records, state.path());
  EXPECT_EQ(report.removed, 3u);
  EXPECT_EQ(report.failed, 1u);
  EXPECT_TRUE(fs::exists(held / "data/file"));
  EXPECT_TRUE(fs::exists(plain / "data/file")) << "a directory berth did not copy is never swept";
  EXPECT_TRUE(fs::exists(foreign / "data/file")) << "nor one another state made";
  EXPECT_FALSE(fs::exists(orphan));
  EXPECT_FALSE(fs::exists(temp));
  EXPECT_TRUE(fs::exists(snapshot / "data/file"));
  EXPECT_FALSE(fs::exists(lost));
  EXPECT_TRUE(fs::exists(busy / "data/inside")) << "never through a mount";
  for (const auto& entry : fs::directory_iterator(state.path() + "/volumes")) {
    EXPECT_FALSE(detail::is_copy_temp_name(entry.path().filename().string()))
      << "a deletion leaves no temp directory behind: " << entry.path();
  }
  ASSERT_EQ(::umount2((busy / "data").c_str(), MNT_DETACH), 0);
  state.cleanup();
}

TEST(copy_sweep, the_transfers_directories_are_emptied_their_mounts_unmounted_first) {
  BERTH_REQUIRE_ROOT();
  test::temp_state state;
  const auto exports = state.path() + "/exports";
  const auto imports = state.path() + "/imports";
  auto left = make_dir(state.path(), "exports", "abc", false);
  auto staging = make_dir(state.path(), "imports", "def", false);
  fs::create_directories(staging / "mnt");
  ASSERT_EQ(::mount("tmpfs", (staging / "mnt").c_str(), "tmpfs", 0, "size=1m"), 0);
  std::ofstream(staging / "mnt/inside") << "y";
  EXPECT_EQ(sweep_transfers({exports, imports, state.path() + "/missing"}), 2u);
  EXPECT_TRUE(fs::is_empty(exports));
  EXPECT_TRUE(fs::is_empty(imports));
  EXPECT_EQ(mounts_of(staging / "mnt"), 0u);
  state.cleanup();
}
