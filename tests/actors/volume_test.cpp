// One Docker volume actor over a fake backend: create, mount counts per ID, unmount,
// remove, failed persists and their undo. Serialized requests, calls past their timeout,
// hung calls and callers that give up are in volume_driver_test.cpp, under CAF's test
// coordinator.

#include "actors/volume.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "tests/actors/fakes.hpp"
#include "tests/actors/volume_test_fixture.hpp"

using namespace berth;
using namespace std::chrono_literals;
using test::code;
using test::volume_test;

TEST_F(volume_test, create_does_not_mount) {
  create();
  EXPECT_EQ(storage->creates, 1);
  EXPECT_EQ(storage->mounts, 0) << "mount at the first Mount, never at Create (docs/design.md)";
  EXPECT_FALSE(get().mounted);
  std::lock_guard<std::mutex> guard{disk->mtx};
  EXPECT_EQ(disk->records.count("v1"), 1u) << "create is durable before the reply";
}

TEST_F(volume_test, create_twice_is_idempotent_and_other_options_are_refused) {
  create();
  EXPECT_FALSE(test::call<atom::ok>(self, vol, atom::create_v, option_map{}, uint64_t{0}));
  auto err = test::call<atom::ok>(self, vol, atom::create_v, option_map{{"type", "tmpfs"}}, uint64_t{0});
  ASSERT_TRUE(err);
  EXPECT_EQ(code(err), static_cast<uint8_t>(ec::already_exists));
  EXPECT_EQ(storage->creates, 1);
}

TEST_F(volume_test, mounts_at_the_first_mount_and_unmounts_at_the_last) {
  create();
  EXPECT_EQ(mount("c1"), "/fake/v1");
  EXPECT_EQ(mount("c2"), "/fake/v1");
  EXPECT_EQ(storage->mounts, 1);
  EXPECT_FALSE(test::call<atom::ok>(self, vol, atom::unmount_v, std::string{"c1"}));
  EXPECT_EQ(storage->unmounts, 0);
  EXPECT_TRUE(storage->host_mounted);
  EXPECT_FALSE(test::call<atom::ok>(self, vol, atom::unmount_v, std::string{"c2"}));
  EXPECT_EQ(storage->unmounts, 1);
  EXPECT_FALSE(storage->host_mounted);
  EXPECT_FALSE(get().mounted);
}

TEST_F(volume_test, docker_cp_with_the_running_containers_id_keeps_the_volume_mounted) {
  create();
  mount("ctr");
  mount("ctr");  // docker cp
  // docker cp done
  EXPECT_FALSE(test::call<atom::ok>(self, vol, atom::unmount_v, std::string{"ctr"}));
  EXPECT_TRUE(storage->host_mounted) << "one count per mount ID: a set of IDs would unmount here";
  EXPECT_EQ(get().mounts.at("ctr"), 1u);
  EXPECT_FALSE(test::call<atom::ok>(self, vol, atom::unmount_v, std::string{"ctr"}));
  EXPECT_FALSE(storage->host_mounted);
}

TEST_F(volume_test, unmount_of_an_unknown_id_is_a_no_op) {
  create();
  mount("c1");
  auto writes = disk->writes.load();
  EXPECT_FALSE(test::call<atom::ok>(self, vol, atom::unmount_v, std::string{"nobody"}));
  EXPECT_EQ(disk->writes, writes);
  EXPECT_TRUE(storage->host_mounted);
}

TEST_F(volume_test, remove_while_mounted_is_refused_with_volume_in_use) {
  create();
  mount("c1");
  auto err = test::call<atom::ok>(self, vol, atom::remove_v, record_owner::docker,
                                    record_kind::volume);
  ASSERT_TRUE(err);
  EXPECT_NE(describe(err).find("volume in use"), std::string::npos);
  EXPECT_EQ(storage->removes, 0);
  EXPECT_FALSE(test::call<atom::ok>(self, vol, atom::unmount_v, std::string{"c1"}));
  EXPECT_FALSE(test::call<atom::ok>(self, vol, atom::remove_v, record_owner::docker,
                                    record_kind::volume));
  EXPECT_EQ(storage->removes, 1);
  EXPECT_TRUE(test::call<volume_record>(self, vol, atom::get_v)) << "a removed volume is not found";
}

TEST_F(volume_test, a_failed_persist_rolls_the_mount_back) {
  create();
  disk->fail = true;
  auto err = test::call<std::string>(self, vol, atom::mount_v,
                                     std::string{"c1"}, std::string{}, caller{});
  ASSERT_TRUE(err);
  EXPECT_EQ(code(err), static_cast<uint8_t>(ec::persist_failure));
  EXPECT_EQ(storage->mounts, 1);
  EXPECT_EQ(storage->unmounts, 1) << "all or nothing (docs/design.md): the mount is undone";
  EXPECT_FALSE(storage->host_mounted);
  disk->fail = false;
  auto rec = get();
  EXPECT_FALSE(rec.mounted);
  EXPECT_TRUE(rec.mounts.empty());
}

TEST_F(volume_test, a_failed_persist_of_the_last_unmount_mounts_again) {
  create();
  mount("c1");
  disk->fail = true;
  auto err = test::call<atom::ok>(self, vol, atom::unmount_v, std::string{"c1"});
  ASSERT_TRUE(err);
  EXPECT_TRUE(storage->host_mounted) << "the unmount was undone";
  disk->fail = false;
  auto rec = get();
  EXPECT_TRUE(rec.mounted);
  EXPECT_EQ(rec.mounts.at("c1"), 1u);
}

TEST_F(volume_test, a_failed_persist_of_a_count_changes_nothing) {
  create();
  mount("c1");
  disk->fail = true;
  EXPECT_TRUE(test::call<std::string>(self, vol, atom::mount_v,
                                      std::string{"c2"}, std::string{}, caller{}));
  disk->fail = false;
  EXPECT_EQ(get().mounts.count("c2"), 0u);
}

TEST_F(volume_test, a_failed_backend_mount_reaches_the_caller_and_saves_nothing) {
  create();
  storage->fail_mount = true;
  auto writes = disk->writes.load();
  auto err = test::call<std::string>(self, vol, atom::mount_v,
                                     std::string{"c1"}, std::string{}, caller{});
  ASSERT_TRUE(err);
  EXPECT_NE(describe(err).find("injected"), std::string::npos);
  EXPECT_EQ(disk->writes, writes);
  EXPECT_FALSE(get().mounted);
}

TEST_F(volume_test, an_unmount_that_hangs_falls_back_to_a_lazy_detach) {
  create();
  mount("c1");
  storage->hang_unmount = true;
  EXPECT_FALSE(test::call<atom::ok>(self, vol, atom::unmount_v, std::string{"c1"}));
  EXPECT_EQ(storage->lazy_unmounts, 1);
  EXPECT_FALSE(get().mounted);
  storage->release();
}

TEST_F(volume_test, remove_of_a_volume_mounted_by_older_state_unmounts_first) {
  // A record mounted on the host but holding no mount ID (an older state).
  self->send_exit(vol, caf::exit_reason::user_shutdown);
  volume_record rec;
  rec.name = "v2";
  rec.mounted = true;
  rec.mountpoint = "/fake/v2";
  storage->host_mounted = true;
  auto persistence = ts.sys->spawn(test::fake_persistence, disk);
  vol = ts.sys->spawn(volume, test::env_of(storage, exec, persistence, 500ms),
                      std::make_shared<const volume_record>(rec), true);
  EXPECT_FALSE(test::call<atom::ok>(self, vol, atom::remove_v, record_owner::docker,
                                    record_kind::volume));
  EXPECT_EQ(storage->unmounts, 1);
  EXPECT_EQ(storage->removes, 1);
}

TEST_F(volume_test, the_unmount_before_a_remove_is_saved_even_when_the_remove_fails) {
  // Mounted by an older state (no mount IDs); the Remove unmounts, then its
  // deletion fails: the volume stays, and its record must say what the host has.
  self->send_exit(vol, caf::exit_reason::user_shutdown);
  volume_record rec;
  rec.name = "v2";
  volume_name = "v2";
  rec.mounted = true;
  rec.mountpoint = "/fake/v2";
  storage->host_mounted = true;
  {
    std::lock_guard<std::mutex> guard{disk->mtx};
    disk->records["v2"] = rec;
  }
  auto persistence = ts.sys->spawn(test::fake_persistence, disk);
  vol = ts.sys->spawn(volume, test::env_of(storage, exec, persistence, 500ms),
                      std::make_shared<const volume_record>(rec), true);
  storage->fail_remove = true;
  EXPECT_TRUE(test::call<atom::ok>(self, vol, atom::remove_v, record_owner::docker,
                                   record_kind::volume));
  EXPECT_EQ(storage->unmounts, 1);
  EXPECT_FALSE(storage->host_mounted);
  EXPECT_FALSE(get().mounted);
  EXPECT_FALSE(on_disk().mounted) << "the unmount is durable, not only in the actor";
  // A restart loads what is on disk: the volume is not mounted there either.
  self->send_exit(vol, caf::exit_reason::user_shutdown);
  vol = ts.sys->spawn(volume, test::env_of(storage, exec, persistence, 500ms),
                      std::make_shared<const volume_record>(on_disk()), true);
  EXPECT_FALSE(get().mounted);
  EXPECT_TRUE(get().mountpoint.empty());
}

TEST_F(volume_test, a_remove_whose_unmount_cannot_be_saved_mounts_again_and_deletes_nothing) {
  self->send_exit(vol, caf::exit_reason::user_shutdown);
  volume_record rec;
  rec.name = "v2";
  volume_name = "v2";
  rec.mounted = true;
  rec.mountpoint = "/fake/v2";
  storage->host_mounted = true;
  auto persistence = ts.sys->spawn(test::fake_persistence, disk);
  vol = ts.sys->spawn(volume, test::env_of(storage, exec, persistence, 500ms),
                      std::make_shared<const volume_record>(rec), true);
  disk->fail = true;
  auto err = test::call<atom::ok>(self, vol, atom::remove_v, record_owner::docker,
                                  record_kind::volume);
  ASSERT_TRUE(err);
  EXPECT_EQ(code(err), static_cast<uint8_t>(ec::persist_failure)) << describe(err);
  EXPECT_EQ(storage->removes, 0) << "all or nothing: no deletion after an unsaved unmount";
  EXPECT_TRUE(storage->host_mounted) << "the unmount was undone";
  disk->fail = false;
  EXPECT_TRUE(get().mounted);
}

TEST_F(volume_test, operations_on_a_missing_volume_say_not_found) {
  auto err = test::call<std::string>(self, vol, atom::mount_v,
                                     std::string{"c1"}, std::string{}, caller{});
  ASSERT_TRUE(err);
  EXPECT_EQ(code(err), static_cast<uint8_t>(ec::not_found));
  EXPECT_NE(describe(err).find("v1"), std::string::npos);
}

TEST_F(volume_test, a_remove_limited_to_another_kind_is_not_found_and_changes_nothing) {
  create();
  auto err = test::call<atom::ok>(self, vol, atom::remove_v, record_owner::docker,
                                record_kind::snapshot);
  ASSERT_TRUE(err);
  EXPECT_EQ(code(err), static_cast<uint8_t>(ec::not_found));
  EXPECT_FALSE(test::call<volume_record>(self, vol, atom::get_v)) << "the volume must remain";
  EXPECT_EQ(storage->removes, 0);
  EXPECT_FALSE(test::call<atom::ok>(self, vol, atom::remove_v, record_owner::docker,
                                          record_kind::volume));
  EXPECT_TRUE(test::call<volume_record>(self, vol, atom::get_v)) << "removed as a volume";
}
