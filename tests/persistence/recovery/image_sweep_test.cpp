// The start-up sweep of block images no record holds (image_sweep.cpp): which files it
// chooses, and that it deletes an orphan image only under the state directory that
// BLOCK/owner names. Plain files: no root needed.

#include "persistence/recovery/image_sweep.hpp"

#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "backends/block_backend.hpp"
#include "tests/backends/temp_state.hpp"

using namespace berth;
namespace fs = std::filesystem;

namespace {

volume_record record(const std::string& name, record_kind kind = record_kind::volume) {
  volume_record rec;
  rec.name = name;
  rec.backend = "block";
  rec.kind = kind;
  return rec;
}

std::string image_of(const volume_record& rec) {
  return std::string{"/b/"} + (rec.kind == record_kind::volume ? "volumes/" : "snapshots/")
         + rec.name + ".img";
}

std::string read_first_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

void touch(const std::string& path) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path) << "x";
}

} // namespace

TEST(image_sweep, chooses_temp_images_and_images_no_record_holds) {
  state_snapshot state;
  state.volumes["a"] = record("a");
  state.volumes["s"] = record("s", record_kind::snapshot);
  auto chosen = images_to_sweep(state, image_of,
                                {"/b/volumes/a.img", "/b/volumes/orphan.img",
                                 "/b/volumes/.a.tmp.77.1", "/b/volumes/notes.txt",
                                 "/b/snapshots/s.img", "/b/snapshots/a.img", "/b/volumes/.hidden.img"});
  EXPECT_EQ(chosen, (std::vector<std::string>{"/b/volumes/orphan.img", "/b/volumes/.a.tmp.77.1",
                                              "/b/snapshots/a.img"}))
    << "a's image is a volume's, not a snapshot's; notes.txt and .hidden.img are not berth's";
}

TEST(image_sweep, deletes_an_orphan_image_only_under_the_state_that_owns_the_block_dir) {
  test::temp_state dir;
  const auto state_dir = dir.path();
  auto block = std::make_shared<block_backend>(state_dir);
  const auto images = fs::path(block->image_dirs().front());
  const auto kept = (images / "kept.img").string();
  const auto orphan = (images / "orphan.img").string();
  const auto temp = (images / ".orphan.tmp.1.1").string();
  touch(kept);
  touch(orphan);
  touch(temp);
  state_snapshot state;
  state.volumes["kept"] = record("kept");
  std::map<std::string, std::shared_ptr<backend>> backends{{"block", block}};

  auto first = sweep_block_images(state, backends, state_dir);
  EXPECT_EQ(first.removed, 1u);
  EXPECT_FALSE(fs::exists(temp)) << "a temp image is never a volume's";
  EXPECT_TRUE(fs::exists(orphan)) << "the first start only writes BLOCK/owner";
  EXPECT_TRUE(fs::exists(images.parent_path() / "owner"));

  auto other = sweep_block_images(state, backends, state_dir + "/elsewhere");
  EXPECT_EQ(other.removed, 0u);
  EXPECT_TRUE(fs::exists(orphan)) << "another state directory deletes nothing";
  const auto id_file = state_dir + "/state/instance-id";
  const auto id = read_first_line(id_file);
  fs::remove(id_file); // the state wiped or replaced at the same path
  EXPECT_EQ(sweep_block_images(state, backends, state_dir).removed, 0u);
  EXPECT_TRUE(fs::exists(orphan)) << "a lost state never costs the images too";
  std::ofstream(id_file) << id << "\n"; // the state it was

  auto second = sweep_block_images(state, backends, state_dir);
  EXPECT_EQ(second.removed, 1u);
  EXPECT_FALSE(fs::exists(orphan));
  EXPECT_TRUE(fs::exists(kept)) << "a record holds it";
  EXPECT_EQ(sweep_block_images(state, backends, state_dir).removed, 0u);
  EXPECT_EQ(sweep_block_images(state, {}, state_dir).removed, 0u) << "no block backend";
}
