// The block backend acts only on its own (docs/design.md, "Only what berth owns"), with
// root, real loop devices and real mounts: it checks node paths and mountinfo
// itself, whatever the caller checked. One test per refusal.
#include <fstream>

#include <gtest/gtest.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "backends/block_backend.hpp"
#include "backends/loop_device.hpp"
#include "backends/mountinfo.hpp"
#include "tests/backends/block_fixture.hpp"

namespace berth {
namespace {

using namespace block_test;

class block_ownership_test : public block_backend_test {
protected:
  /// A tmpfs at `path` (created) with the file "foreign" in it.
  void mount_foreign(const std::string& path) {
    fs::create_directories(path);
    ASSERT_EQ(::mount("tmpfs", path.c_str(), "tmpfs", 0, "size=1m"), 0) << path;
    std::ofstream(path + "/foreign") << "not berth's";
  }
  static bool foreign_intact(const std::string& path) {
    return read_text(path + "/foreign") == "not berth's";
  }
  std::string outside(const std::string& name) const {
    return root_ + "/outside/" + name;
  }
};

TEST_F(block_ownership_test, node_paths_outside_the_kubelet_dir_are_refused_untouched) {
  auto rec = make_record("v1", 32 * mib, "ext4");
  ASSERT_FALSE(backend_->create(rec));
  fs::create_directories(outside("staging"));
  auto staged = backend_->stage(rec, {outside("staging"), false, "", {}});
  ASSERT_FALSE(staged);
  EXPECT_EQ(code_of(staged.error()), ec::invalid_argument) << describe(staged.error());
  EXPECT_TRUE(mentions(staged.error(), "kubelet")) << describe(staged.error());
  EXPECT_EQ(*find_loop_device(backend_->image_path(rec)), "") << "nothing attached";

  create_and_stage(rec);
  auto pub = backend_->publish(rec, outside("target"), {});
  ASSERT_FALSE(pub);
  EXPECT_EQ(code_of(pub.error()), ec::invalid_argument);
  EXPECT_FALSE(fs::exists(outside("target")));

  mount_foreign(outside("mnt"));
  EXPECT_EQ(code_of(backend_->unpublish(rec, outside("mnt"))), ec::invalid_argument);
  EXPECT_EQ(code_of(backend_->sweep_staging(rec, outside("mnt"))), ec::invalid_argument);
  auto elsewhere = rec;
  elsewhere.staging_path = outside("mnt");
  EXPECT_EQ(code_of(backend_->unstage(elsewhere)), ec::invalid_argument);
  EXPECT_TRUE(foreign_intact(outside("mnt")));
  EXPECT_TRUE(is_mount_point(rec.staging_path)) << "the refused unstage touched nothing";
}

TEST_F(block_ownership_test, publish_onto_a_foreign_mount_is_a_failed_precondition) {
  auto rec = make_record("v1", 32 * mib, "ext4");
  create_and_stage(rec);
  mount_foreign(target("v1"));
  auto pub = backend_->publish(rec, target("v1"), {});
  ASSERT_FALSE(pub);
  EXPECT_EQ(code_of(pub.error()), ec::failed_precondition) << describe(pub.error());
  EXPECT_TRUE(mentions(pub.error(), "tmpfs")) << describe(pub.error());
  EXPECT_TRUE(foreign_intact(target("v1")));
}

TEST_F(block_ownership_test, publish_onto_its_own_mount_the_other_way_already_exists) {
  auto rec = make_record("v1", 32 * mib, "ext4");
  create_and_stage(rec);
  ASSERT_FALSE(publish(rec, target("v1"), {true, false, {}}));
  auto rw = backend_->publish(rec, target("v1"), {false, false, {}});
  ASSERT_FALSE(rw);
  EXPECT_EQ(code_of(rw.error()), ec::already_exists) << describe(rw.error());
  auto again = backend_->publish(rec, target("v1"), {true, false, {}});
  ASSERT_TRUE(again) << describe(again.error());
  EXPECT_FALSE(*again) << "adopted, not created";
  auto as_block = backend_->publish(rec, target("v1"), {true, true, {}});
  ASSERT_FALSE(as_block) << "its filesystem is bound there, the publish asks its device";
  EXPECT_EQ(code_of(as_block.error()), ec::already_exists) << describe(as_block.error());
}

TEST_F(block_ownership_test, publish_refuses_a_staging_path_that_holds_a_foreign_mount) {
  auto rec = make_record("v1", 32 * mib, "ext4");
  create_and_stage(rec);
  mount_foreign(rec.staging_path);
  auto pub = backend_->publish(rec, target("v1"), {});
  ASSERT_FALSE(pub) << "the pod would get the foreign filesystem";
  EXPECT_EQ(code_of(pub.error()), ec::failed_precondition) << describe(pub.error());
  EXPECT_FALSE(fs::exists(target("v1")));
}

TEST_F(block_ownership_test, unpublish_never_unmounts_a_foreign_mount) {
  auto rec = make_record("v1", 32 * mib, "ext4");
  create_and_stage(rec);
  ASSERT_FALSE(publish(rec, target("v1"), {}));
  mount_foreign(target("v1"));
  auto err = backend_->unpublish(rec, target("v1"));
  ASSERT_TRUE(err) << "the volume's bind is under a foreign mount";
  EXPECT_EQ(code_of(err), ec::failed_precondition) << describe(err);
  EXPECT_TRUE(foreign_intact(target("v1")));
  // A foreign mount alone, at a target the record lacks: left, and that is success.
  mount_foreign(target("v1", "pod2"));
  EXPECT_FALSE(backend_->unpublish(rec, target("v1", "pod2")));
  EXPECT_TRUE(foreign_intact(target("v1", "pod2")));
}

TEST_F(block_ownership_test, unpublish_deletes_only_a_target_the_record_says_it_created) {
  auto rec = make_record("b1", 32 * mib);
  ASSERT_FALSE(backend_->create(rec));
  stage_request req{staging("b1"), true, "", {}};
  auto dev = backend_->stage(rec, req);
  ASSERT_TRUE(dev) << describe(dev.error());
  rec.staging_path = req.staging_path;
  rec.staged_block = true;
  rec.device = *dev;
  auto file = target("b1");
  fs::create_directories(fs::path(file).parent_path());
  std::ofstream(file) << "precious";
  ASSERT_FALSE(publish(rec, file, {false, true, {}}));
  EXPECT_FALSE(rec.published.at(file).created);
  ASSERT_FALSE(unpublish(rec, file));
  EXPECT_EQ(read_text(file), "precious") << "a file berth did not create stays";
  // A target the record lacks is never deleted, even one berth's bind is on.
  auto made = target("b1", "pod2");
  auto created = backend_->publish(rec, made, {false, true, {}});
  ASSERT_TRUE(created && *created);
  ASSERT_FALSE(backend_->unpublish(rec, made));
  EXPECT_FALSE(is_mount_point(made)) << "this volume's bind comes off";
  EXPECT_TRUE(fs::exists(made)) << "but the record does not say berth made the file";
}

TEST_F(block_ownership_test, unstage_never_unmounts_a_foreign_mount) {
  auto rec = make_record("v1", 32 * mib, "ext4");
  create_and_stage(rec);
  mount_foreign(rec.staging_path);
  auto err = backend_->unstage(rec);
  ASSERT_TRUE(err);
  EXPECT_EQ(code_of(err), ec::failed_precondition) << describe(err);
  EXPECT_TRUE(foreign_intact(rec.staging_path));
  EXPECT_NE(*find_loop_device(backend_->image_path(rec)), "") << "nothing detached either";
}

TEST_F(block_ownership_test, stage_onto_a_foreign_mount_is_a_failed_precondition) {
  auto rec = make_record("v1", 32 * mib, "ext4");
  ASSERT_FALSE(backend_->create(rec));
  mount_foreign(staging("v1"));
  auto dev = backend_->stage(rec, {staging("v1"), false, "", {}});
  ASSERT_FALSE(dev);
  EXPECT_EQ(code_of(dev.error()), ec::failed_precondition) << describe(dev.error());
  EXPECT_TRUE(foreign_intact(staging("v1")));
  EXPECT_TRUE(wait_detached(backend_->image_path(rec))) << "the device it attached is detached";
}

TEST_F(block_ownership_test, a_sweep_takes_only_the_volumes_own_mount) {
  auto rec = make_record("v1", 32 * mib, "ext4");
  create_and_stage(rec);
  // Another stage of the same device at a second path: what a crash leaves.
  auto second = staging("second");
  fs::create_directories(second);
  ASSERT_EQ(::mount(rec.device.c_str(), second.c_str(), "ext4", 0, nullptr), 0);
  mount_foreign(staging("foreign"));
  EXPECT_FALSE(backend_->sweep_staging(rec, staging("foreign")));
  EXPECT_TRUE(foreign_intact(staging("foreign")));
  EXPECT_FALSE(backend_->sweep_staging(rec, second));
  EXPECT_FALSE(is_mount_point(second)) << "the volume's own leftover mount comes off";
  EXPECT_TRUE(is_mount_point(rec.staging_path));
  EXPECT_NE(*find_loop_device(backend_->image_path(rec)), "")
    << "the recorded staging still uses the device: it stays attached";
  ASSERT_FALSE(backend_->unstage(rec));
  EXPECT_TRUE(wait_detached(backend_->image_path(rec)));
}

TEST_F(block_ownership_test, a_sweep_of_a_volume_staged_nowhere_detaches_it) {
  auto rec = make_record("v1", 32 * mib, "ext4");
  create_and_stage(rec);
  auto unrecorded = rec;
  unrecorded.staging_path.clear();
  unrecorded.device.clear();
  EXPECT_FALSE(backend_->sweep_staging(unrecorded, rec.staging_path));
  EXPECT_FALSE(is_mount_point(rec.staging_path));
  EXPECT_TRUE(wait_detached(backend_->image_path(rec)));
}

} // namespace
} // namespace berth
