// The start-up sweep of directory copies no record holds (copy_sweep.cpp): which entries
// it chooses, and on disk that it deletes a temp copy and an unrecorded marked copy, keeps
// a recorded one and any directory it did not copy, and never descends into a mount.

#include "persistence/recovery/copy_sweep.hpp"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <sys/mount.h>

#include "backends/detail/tree_copy.hpp"
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

/// STATE/ROOT/NAME with data/file, and the copy marker when `marked`.
fs::path make_dir(const std::string& state, const std::string& root, const std::string& name,
                  bool marked) {
  fs::path dir = fs::path(state) / root / name;
  fs::create_directories(dir / "data");
  std::ofstream(dir / "data/file") << "x";
  if (marked) {
    std::ofstream(dir / detail::copy_marker) << "volume:src\n";
  }
  return dir;
}

} // namespace

TEST(copy_sweep, chooses_temp_copies_and_marked_copies_no_record_holds) {
  state_snapshot state;
  state.volumes["kept"] = record("kept");
  state.volumes["snap"] = record("snap", record_kind::snapshot);
  state.volumes["img"] = record("img", record_kind::volume, "block");
  std::vector<copy_entry> volumes{{"kept", true},     {"plain", false},   {"orphan", true},
                                  {"snap", true},     {".x.tmp.9.1", false}, {"img", true},
                                  {".hidden", true}};
  EXPECT_EQ(copies_to_sweep(state, record_kind::volume, volumes),
            (std::vector<std::string>{"orphan", "snap", ".x.tmp.9.1", "img"}))
    << "plain was not copied; snap is a snapshot's name, img a block volume's; .hidden is "
       "no name berth gives";
  std::vector<copy_entry> snapshots{{"snap", true}, {"kept", true}, {"unmarked", false}};
  EXPECT_EQ(copies_to_sweep(state, record_kind::snapshot, snapshots),
            (std::vector<std::string>{"kept"}));
}

TEST(copy_sweep, deletes_orphans_and_keeps_what_a_record_or_no_copy_made) {
  BERTH_REQUIRE_ROOT();
  test::temp_state state;
  state_snapshot records;
  records.volumes["held"] = record("held");
  records.volumes["s1"] = record("s1", record_kind::snapshot);
  auto held = make_dir(state.path(), "volumes", "held", true);
  auto plain = make_dir(state.path(), "volumes", "plain", false);
  auto orphan = make_dir(state.path(), "volumes", "orphan", true);
  auto temp = make_dir(state.path(), "volumes", ".c1.tmp.12.3", false);
  auto snapshot = make_dir(state.path(), "snapshots", "s1", true);
  auto lost = make_dir(state.path(), "snapshots", "s2", true);
  auto busy = make_dir(state.path(), "snapshots", "s3", true);
  ASSERT_EQ(::mount("tmpfs", (busy / "data").c_str(), "tmpfs", 0, "size=1m"), 0);
  std::ofstream(busy / "data/inside") << "y";

  auto report = sweep_local_copies(records, state.path());
  EXPECT_EQ(report.removed, 3u);
  EXPECT_EQ(report.failed, 1u);
  EXPECT_TRUE(fs::exists(held / "data/file"));
  EXPECT_TRUE(fs::exists(plain / "data/file")) << "a directory berth did not copy is never swept";
  EXPECT_FALSE(fs::exists(orphan));
  EXPECT_FALSE(fs::exists(temp));
  EXPECT_TRUE(fs::exists(snapshot / "data/file"));
  EXPECT_FALSE(fs::exists(lost));
  EXPECT_TRUE(fs::exists(busy / "data/inside")) << "never through a mount";
  ASSERT_EQ(::umount2((busy / "data").c_str(), MNT_DETACH), 0);
  state.cleanup();
}
