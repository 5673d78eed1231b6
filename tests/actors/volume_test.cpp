#include "actors/volume.hpp"

#include <thread>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "tests/actors/fakes.hpp"

using namespace berth;
using namespace std::chrono_literals;

namespace {

class volume_test : public test::volume_fixture {
protected:
  void SetUp() override {
    spawn_volume("v1", 500ms);
  }

  std::string mount(const std::string& id) {
    std::string mp;
    self->request(vol, 5s, atom::mount_v, id)
      .receive([&](std::string& out) { mp = out; },
               [&](caf::error& err) { ADD_FAILURE() << describe(err); });
    return mp;
  }

  volume_record get() {
    volume_record rec;
    self->request(vol, 5s, atom::get_v)
      .receive([&](volume_record& out) { rec = out; },
               [&](caf::error& err) { ADD_FAILURE() << describe(err); });
    return rec;
  }

  void create() {
    ASSERT_FALSE(test::call<atom::ok>(self, vol, atom::create_v, option_map{})) << "create failed";
  }
};

uint8_t code(const caf::error& err) {
  return err.code();
}

} // namespace

TEST_F(volume_test, create_does_not_mount) {
  create();
  EXPECT_EQ(storage->creates, 1);
  EXPECT_EQ(storage->mounts, 0) << "DESIGN bug 1: mount at first Mount, never at Create";
  EXPECT_FALSE(get().mounted);
  std::lock_guard<std::mutex> guard{disk->mtx};
  EXPECT_EQ(disk->records.count("v1"), 1u) << "create is durable before the reply";
}

TEST_F(volume_test, create_twice_is_idempotent_and_other_options_are_refused) {
  create();
  EXPECT_FALSE(test::call<atom::ok>(self, vol, atom::create_v, option_map{}));
  auto err = test::call<atom::ok>(self, vol, atom::create_v, option_map{{"type", "tmpfs"}});
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
  EXPECT_TRUE(storage->host_mounted) << "DESIGN bug 2: a set of IDs would unmount here";
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
  auto err = test::call<atom::ok>(self, vol, atom::remove_v);
  ASSERT_TRUE(err);
  EXPECT_NE(describe(err).find("volume in use"), std::string::npos);
  EXPECT_EQ(storage->removes, 0);
  EXPECT_FALSE(test::call<atom::ok>(self, vol, atom::unmount_v, std::string{"c1"}));
  EXPECT_FALSE(test::call<atom::ok>(self, vol, atom::remove_v));
  EXPECT_EQ(storage->removes, 1);
  EXPECT_TRUE(test::call<volume_record>(self, vol, atom::get_v)) << "a removed volume is not found";
}

TEST_F(volume_test, a_failed_persist_rolls_the_mount_back) {
  create();
  disk->fail = true;
  auto err = test::call<std::string>(self, vol, atom::mount_v, std::string{"c1"});
  ASSERT_TRUE(err);
  EXPECT_EQ(code(err), static_cast<uint8_t>(ec::persist_failure));
  EXPECT_EQ(storage->mounts, 1);
  EXPECT_EQ(storage->unmounts, 1) << "DESIGN bug 3: the mount is undone";
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
  EXPECT_TRUE(test::call<std::string>(self, vol, atom::mount_v, std::string{"c2"}));
  disk->fail = false;
  EXPECT_EQ(get().mounts.count("c2"), 0u);
}

TEST_F(volume_test, a_failed_backend_mount_reaches_the_caller_and_saves_nothing) {
  create();
  storage->fail_mount = true;
  auto writes = disk->writes.load();
  auto err = test::call<std::string>(self, vol, atom::mount_v, std::string{"c1"});
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
  vol = ts.sys->spawn(volume, volume_env{storage, exec, persistence, 500ms}, rec, true);
  EXPECT_FALSE(test::call<atom::ok>(self, vol, atom::remove_v));
  EXPECT_EQ(storage->unmounts, 1);
  EXPECT_EQ(storage->removes, 1);
}

TEST_F(volume_test, operations_on_a_missing_volume_say_not_found) {
  auto err = test::call<std::string>(self, vol, atom::mount_v, std::string{"c1"});
  ASSERT_TRUE(err);
  EXPECT_EQ(code(err), static_cast<uint8_t>(ec::not_found));
  EXPECT_NE(describe(err).find("v1"), std::string::npos);
}

TEST_F(volume_test, concurrent_requests_are_serialized) {
  create();
  std::vector<std::unique_ptr<caf::scoped_actor>> clients;
  for (int i = 0; i < 8; ++i) {
    clients.emplace_back(std::make_unique<caf::scoped_actor>(*ts.sys));
  }
  // Every client mounts with its own ID, then all unmount: one host mount, one unmount.
  for (int i = 0; i < 8; ++i) {
    (*clients[i])->request(vol, 5s, atom::mount_v, "id" + std::to_string(i))
      .receive([](std::string&) {}, [](caf::error& err) { ADD_FAILURE() << describe(err); });
  }
  EXPECT_EQ(storage->mounts, 1);
  EXPECT_EQ(total_mounts(get()), 8u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_FALSE(test::call<atom::ok>(self, vol, atom::unmount_v, "id" + std::to_string(i)));
  }
  EXPECT_EQ(storage->unmounts, 1);
}

TEST_F(volume_test, a_remove_limited_to_another_kind_is_not_found_and_changes_nothing) {
  create();
  auto err = test::call<atom::ok>(self, vol, atom::remove_v, std::string{owner_docker},
                                std::string{kind_snapshot});
  ASSERT_TRUE(err);
  EXPECT_EQ(code(err), static_cast<uint8_t>(ec::not_found));
  EXPECT_FALSE(test::call<volume_record>(self, vol, atom::get_v)) << "the volume must remain";
  EXPECT_EQ(storage->removes, 0);
  EXPECT_FALSE(test::call<atom::ok>(self, vol, atom::remove_v, std::string{owner_docker},
                                          std::string{kind_volume}));
  EXPECT_TRUE(test::call<volume_record>(self, vol, atom::get_v)) << "removed as a volume";
}

TEST_F(volume_test, a_mount_that_lands_after_its_timeout_is_undone) {
  create();
  storage->hang_mount = true;
  auto err = test::call<std::string>(self, vol, atom::mount_v, std::string{"c1"});
  ASSERT_TRUE(err) << "the mount must time out";
  EXPECT_EQ(code(err), static_cast<uint8_t>(ec::timeout)) << describe(err);
  storage->release(); // the mount now lands, after its caller was told it failed
  for (int i = 0; i < 300 && storage->host_mounted; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_FALSE(storage->host_mounted) << "a mount the record lacks must be undone";
  EXPECT_FALSE(get().mounted);
}
