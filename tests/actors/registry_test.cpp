#include "actors/registry.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "tests/actors/fakes.hpp"

using namespace berth;
using namespace std::chrono_literals;

namespace {

class registry_test : public ::testing::Test {
protected:
  test::test_system ts;
  std::shared_ptr<test::fake_backend> storage = std::make_shared<test::fake_backend>();
  std::shared_ptr<test::fake_disk> disk = std::make_shared<test::fake_disk>();
  std::shared_ptr<executor> exec = std::make_shared<executor>(4, 64);
  caf::scoped_actor self{*ts.sys};
  registry_actor reg;

  void start(std::vector<volume_record> initial = {}) {
    registry_config cfg;
    cfg.backends["local"] = storage;
    cfg.exec = exec;
    cfg.persistence = ts.sys->spawn(test::fake_persistence, disk);
    cfg.backend_timeout = 1s;
    reg = ts.sys->spawn(registry, cfg, std::move(initial));
  }

  void TearDown() override {
    self->send_exit(reg, caf::exit_reason::user_shutdown);
    exec->stop();
  }

  /// Sends one request whose reply has type R; returns its error (empty on success).
  template <class R, class... Ts>
  caf::error call(Ts&&... xs) {
    caf::error result;
    self->request(reg, 5s, std::forward<Ts>(xs)...)
      .receive([](R&) {}, [&](caf::error& err) { result = err; });
    return result;
  }

  std::vector<volume_record> list() {
    std::vector<volume_record> out;
    self->request(reg, 5s, atom::list_v)
      .receive([&](std::vector<volume_record>& xs) { out = xs; },
               [&](caf::error& err) { ADD_FAILURE() << describe(err); });
    return out;
  }
};

} // namespace

TEST_F(registry_test, creates_lists_and_removes_volumes) {
  start();
  EXPECT_FALSE(call<atom::ok>(atom::create_v, std::string{"b"}, option_map{}));
  EXPECT_FALSE(call<atom::ok>(atom::create_v, std::string{"a"}, option_map{}));
  auto all = list();
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].name, "a");
  EXPECT_EQ(all[1].name, "b");
  EXPECT_FALSE(call<atom::ok>(atom::remove_v, std::string{"a"}));
  EXPECT_EQ(list().size(), 1u);
  auto err = call<atom::ok>(atom::remove_v, std::string{"a"});
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), static_cast<uint8_t>(ec::not_found));
}

TEST_F(registry_test, bad_names_and_options_are_refused_and_change_nothing) {
  start();
  auto err = call<atom::ok>(atom::create_v, std::string{"../etc"}, option_map{});
  ASSERT_TRUE(err);
  EXPECT_NE(describe(err).find("invalid volume name \"../etc\""), std::string::npos);
  err = call<atom::ok>(atom::create_v, std::string{"v"}, option_map{{"bogus", "1"}});
  ASSERT_TRUE(err);
  EXPECT_NE(describe(err).find("bogus"), std::string::npos);
  EXPECT_TRUE(list().empty());
  EXPECT_EQ(storage->creates, 0);
}

TEST_F(registry_test, mount_of_an_unknown_volume_is_not_found) {
  start();
  auto err = call<std::string>(atom::mount_v, std::string{"nope"}, std::string{"c1"});
  ASSERT_TRUE(err);
  EXPECT_EQ(describe(err), "no such volume: nope");
}

TEST_F(registry_test, a_name_can_be_created_again_after_remove) {
  start();
  EXPECT_FALSE(call<atom::ok>(atom::create_v, std::string{"v"}, option_map{}));
  EXPECT_FALSE(call<atom::ok>(atom::remove_v, std::string{"v"}));
  EXPECT_FALSE(call<atom::ok>(atom::create_v, std::string{"v"}, option_map{{"type", "tmpfs"}}));
  auto all = list();
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].options.at("type"), "tmpfs");
}

TEST_F(registry_test, a_failed_create_leaves_no_name_behind) {
  start();
  disk->fail = true;
  EXPECT_TRUE(call<atom::ok>(atom::create_v, std::string{"v"}, option_map{}));
  disk->fail = false;
  EXPECT_TRUE(list().empty());
  EXPECT_EQ(storage->removes, 1) << "the created storage is undone";
  EXPECT_TRUE(call<std::string>(atom::mount_v, std::string{"v"}, std::string{"c"}));
}

TEST_F(registry_test, serves_loaded_state_with_its_counts) {
  volume_record rec;
  rec.name = "old";
  rec.mounts = {{"c1", 2}};
  rec.mounted = true;
  rec.mountpoint = "/fake/old";
  start({rec});
  EXPECT_FALSE(call<atom::ok>(atom::unmount_v, std::string{"old"}, std::string{"c1"}));
  EXPECT_EQ(storage->unmounts, 0);
  EXPECT_FALSE(call<atom::ok>(atom::unmount_v, std::string{"old"}, std::string{"c1"}));
  EXPECT_EQ(storage->unmounts, 1);
}
