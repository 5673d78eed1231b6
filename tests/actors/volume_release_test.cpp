// The release of a mount ID dockerd forgot (docs/design.md), through the real registry and
// volume actors on the fake backend, with the real journal (file_store) behind them.

#include <filesystem>

#include <gtest/gtest.h>

#include "actors/persistence.hpp"
#include "actors/registry.hpp"
#include "core/errors.hpp"
#include "persistence/file_store.hpp"
#include "tests/actors/fakes.hpp"

using namespace berth;
using namespace std::chrono_literals;

namespace {

constexpr const char* old_dockerd = "4242@981273";
constexpr const char* new_dockerd = "5151@1000000";

class volume_release_test : public ::testing::Test {
protected:
  test::test_system ts;
  std::shared_ptr<test::fake_backend> storage = std::make_shared<test::fake_backend>();
  std::shared_ptr<executor> exec = std::make_shared<executor>(4, 64);
  std::shared_ptr<telemetry> stats = std::make_shared<telemetry>(std::vector<std::string>{"local"});
  caf::scoped_actor self{*ts.sys};
  std::string dir = [] {
    char tmpl[] = "/tmp/berth-release-XXXXXX";
    return std::string{::mkdtemp(tmpl)} + "/state";
  }();
  persistence_actor persistence;
  registry_actor reg;
  std::chrono::milliseconds backend_timeout = 1s;

  /// Loads the journal in `dir` and starts persistence and the registry on it.
  void start() {
    auto st = std::make_shared<file_store>(dir);
    auto loaded = st->load();
    ASSERT_TRUE(loaded) << describe(loaded.error());
    auto durable = share(std::move(*loaded));
    shared_records initial;
    for (const auto& [name, rec] : durable.volumes) {
      initial.push_back(rec);
    }
    persistence = spawn_persistence(*ts.sys, st, std::move(durable));
    registry_config cfg;
    cfg.backends["local"] = storage;
    cfg.exec = exec;
    cfg.persistence = persistence;
    cfg.backend_timeout = backend_timeout;
    cfg.stats = stats;
    reg = ts.sys->spawn(registry, cfg, std::move(initial));
  }

  /// Stops the registry and persistence as berthd does (drain, flush, exit).
  void stop() {
    EXPECT_FALSE(test::call<atom::ok>(self, reg, atom::drain_v));
    EXPECT_FALSE(test::call<atom::ok>(self, persistence, atom::flush_v));
    self->send_exit(reg, caf::exit_reason::user_shutdown);
    self->send_exit(persistence, caf::exit_reason::user_shutdown);
    self->wait_for(reg, persistence);
  }

  void TearDown() override {
    stop();
    exec->stop();
    std::error_code ignored;
    std::filesystem::remove_all(std::filesystem::path{dir}.parent_path(), ignored);
  }

  void create(const std::string& name) {
    ASSERT_FALSE(test::call<atom::ok>(self, reg, atom::create_v, name, option_map{}));
  }

  void mount(const std::string& name, const std::string& id, const std::string& dockerd) {
    ASSERT_FALSE(test::call<std::string>(self, reg, atom::mount_v, name, id, dockerd, caller{}))
      << "mount of " << id;
  }

  volume_record get(const std::string& name) {
    auto rec = test::ask<volume_record>(self, reg, atom::get_v, name);
    EXPECT_TRUE(rec) << describe(rec.error());
    return rec ? *rec : volume_record{};
  }

  /// An automatic release of `id` as the reconciliation sends it: decided on the
  /// origin the record holds now.
  mount_release automatic(const std::string& name, const std::string& id,
                          release_reason reason = release_reason::stale_instance) {
    mount_release r;
    r.id = id;
    r.reason = reason;
    r.if_unchanged = true;
    r.seen = get(name).origins[id];
    r.log = "volume " + name + " released mount ID " + id + " (reason " + to_string(reason)
            + ", count N dropped): test";
    return r;
  }

  mount_release by_operator(const std::string& id) {
    mount_release r;
    r.id = id;
    r.reason = release_reason::operator_request;
    r.if_unchanged = false;
    r.log = "released by the test's operator";
    return r;
  }

  caf::expected<uint32_t> release(const std::string& name, mount_release r) {
    return test::ask<uint32_t>(self, reg, atom::release_v, name, std::move(r));
  }

  uint64_t released(release_reason reason) const {
    return stats->mount_ids_released.value(to_string(reason));
  }
};

uint8_t code_of(ec x) {
  return static_cast<uint8_t>(x);
}

} // namespace

TEST_F(volume_release_test, the_release_of_the_last_id_unmounts_the_volume) {
  start();
  create("kv");
  mount("kv", "c1", old_dockerd);
  ASSERT_TRUE(storage->host_mounted);
  auto dropped = release("kv", automatic("kv", "c1"));
  ASSERT_TRUE(dropped) << describe(dropped.error());
  EXPECT_EQ(*dropped, 1u);
  EXPECT_EQ(storage->unmounts, 1) << "the host unmount of the last Unmount";
  EXPECT_FALSE(storage->host_mounted);
  auto rec = get("kv");
  EXPECT_FALSE(rec.mounted);
  EXPECT_TRUE(rec.mountpoint.empty());
  EXPECT_TRUE(rec.mounts.empty());
  EXPECT_TRUE(rec.origins.empty());
  EXPECT_EQ(released(release_reason::stale_instance), 1u);
  // Nothing holds it now: `docker volume rm` succeeds.
  EXPECT_FALSE(test::call<atom::ok>(self, reg, atom::remove_v, std::string{"kv"},
                                    record_owner::docker, record_kind::volume));
}

TEST_F(volume_release_test, the_release_of_one_of_two_ids_keeps_the_mount) {
  start();
  create("kv");
  mount("kv", "c1", old_dockerd);
  mount("kv", "c1", old_dockerd);
  mount("kv", "c2", new_dockerd);
  auto dropped = release("kv", automatic("kv", "c1"));
  ASSERT_TRUE(dropped) << describe(dropped.error());
  EXPECT_EQ(*dropped, 2u) << "the whole count of the ID";
  EXPECT_EQ(storage->unmounts, 0);
  EXPECT_TRUE(storage->host_mounted);
  auto rec = get("kv");
  EXPECT_TRUE(rec.mounted);
  EXPECT_EQ(rec.mounts, (mount_counts{{"c2", 1}}));
  EXPECT_EQ(rec.origins.count("c1"), 0u);
  EXPECT_EQ(rec.origins.at("c2").dockerd, new_dockerd);
  EXPECT_EQ(released(release_reason::stale_instance), 1u);
}

TEST_F(volume_release_test, an_automatic_release_is_skipped_when_the_id_was_mounted_again_since) {
  start();
  create("kv");
  mount("kv", "c1", old_dockerd);
  auto decided = automatic("kv", "c1");
  // A --restart always container mounts again from the new dockerd before the turn comes.
  mount("kv", "c1", new_dockerd);
  auto dropped = release("kv", decided);
  ASSERT_TRUE(dropped) << describe(dropped.error());
  EXPECT_EQ(*dropped, 0u);
  // The same dockerd mounting again within the same millisecond is seen too.
  decided = automatic("kv", "c1");
  mount("kv", "c1", new_dockerd);
  dropped = release("kv", decided);
  ASSERT_TRUE(dropped) << describe(dropped.error());
  EXPECT_EQ(*dropped, 0u);
  auto rec = get("kv");
  EXPECT_EQ(rec.mounts.at("c1"), 2u) << "1 replacing the old dockerd's count, then 1 more";
  EXPECT_TRUE(rec.mounted);
  EXPECT_EQ(storage->unmounts, 0);
  EXPECT_EQ(released(release_reason::stale_instance), 0u) << "nothing was released";
}

TEST_F(volume_release_test, an_automatic_release_of_an_id_no_longer_counted_drops_nothing) {
  start();
  create("kv");
  mount("kv", "c1", old_dockerd);
  auto decided = automatic("kv", "c1", release_reason::died);
  ASSERT_FALSE(test::call<atom::ok>(self, reg, atom::unmount_v, std::string{"kv"},
                                    std::string{"c1"}));
  auto dropped = release("kv", decided);
  ASSERT_TRUE(dropped) << describe(dropped.error());
  EXPECT_EQ(*dropped, 0u);
  EXPECT_EQ(released(release_reason::died), 0u);
}

TEST_F(volume_release_test, an_operator_release_drops_the_count_whatever_its_origin) {
  start();
  create("kv");
  mount("kv", "ecs-task", ""); // no dockerd: only an operator may release it
  mount("kv", "ecs-task", "");
  mount("kv", "other", "");
  auto dropped = release("kv", by_operator("ecs-task"));
  ASSERT_TRUE(dropped) << describe(dropped.error());
  EXPECT_EQ(*dropped, 2u);
  EXPECT_EQ(get("kv").mounts, (mount_counts{{"other", 1}}));
  EXPECT_EQ(released(release_reason::operator_request), 1u);
}

TEST_F(volume_release_test, an_operator_release_of_an_unknown_id_is_not_found) {
  start();
  create("kv");
  mount("kv", "c1", old_dockerd);
  auto dropped = release("kv", by_operator("nope"));
  ASSERT_FALSE(dropped);
  EXPECT_EQ(dropped.error().code(), code_of(ec::not_found));
  EXPECT_NE(describe(dropped.error()).find("volume kv counts no mount ID nope"), std::string::npos)
    << describe(dropped.error());
  auto missing = release("nothere", by_operator("c1"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), code_of(ec::not_found));
  EXPECT_EQ(get("kv").mounts.at("c1"), 1u);
  EXPECT_EQ(released(release_reason::operator_request), 0u);
}

TEST_F(volume_release_test, a_csi_record_is_not_found) {
  start();
  volume_spec spec;
  spec.backend = "local";
  spec.required_bytes = 8 * test::fake_backend::mib;
  ASSERT_FALSE(test::call<volume_record>(self, reg, atom::create_v, std::string{"pvc-1"}, spec));
  for (auto r : {by_operator("c1"), automatic("pvc-1", "c1")}) {
    auto dropped = release("pvc-1", r);
    ASSERT_FALSE(dropped) << "a release acts on Docker records only";
    EXPECT_EQ(dropped.error().code(), code_of(ec::not_found)) << describe(dropped.error());
  }
}

TEST_F(volume_release_test, a_release_is_counted_once_and_a_failed_one_not_at_all) {
  start();
  create("kv");
  mount("kv", "c1", old_dockerd);
  storage->fail_unmount = true;
  auto failed = release("kv", automatic("kv", "c1", release_reason::container_gone));
  ASSERT_FALSE(failed) << "the host unmount failed";
  EXPECT_EQ(released(release_reason::container_gone), 0u);
  EXPECT_EQ(get("kv").mounts.at("c1"), 1u) << "all or nothing: the count stays";
  EXPECT_TRUE(get("kv").mounted);
  storage->fail_unmount = false;
  auto r = automatic("kv", "c1", release_reason::container_gone);
  auto dropped = release("kv", r);
  ASSERT_TRUE(dropped) << describe(dropped.error());
  EXPECT_EQ(*dropped, 1u);
  auto again = release("kv", r);
  ASSERT_TRUE(again) << describe(again.error());
  EXPECT_EQ(*again, 0u);
  EXPECT_EQ(released(release_reason::container_gone), 1u);
  EXPECT_EQ(stats->mount_ids_released.value("other"), 0u);
}

TEST_F(volume_release_test, a_release_survives_a_restart_from_the_journal) {
  start();
  create("kv");
  mount("kv", "c1", old_dockerd);
  mount("kv", "c2", new_dockerd);
  auto dropped = release("kv", automatic("kv", "c1"));
  ASSERT_TRUE(dropped) << describe(dropped.error());
  EXPECT_EQ(*dropped, 1u);
  stop();
  start(); // the actors again, from what the journal holds
  auto rec = get("kv");
  EXPECT_EQ(rec.mounts, (mount_counts{{"c2", 1}})) << "the release is durable";
  EXPECT_EQ(rec.origins.count("c1"), 0u);
  ASSERT_EQ(rec.origins.count("c2"), 1u);
  EXPECT_EQ(rec.origins.at("c2").dockerd, new_dockerd) << "the origins are durable too";
  EXPECT_GT(rec.origins.at("c2").last_mounted_ms, 0);
  auto gone = release("kv", by_operator("c1"));
  ASSERT_FALSE(gone);
  EXPECT_EQ(gone.error().code(), code_of(ec::not_found));
}

TEST_F(volume_release_test, a_record_only_release_runs_while_a_call_is_hung) {
  // A loaded volume whose host mount could not be remade keeps its counts, unmounted:
  // its next Mount mounts the host, and that call hangs.
  volume_record rec;
  rec.name = "kv";
  rec.owner = record_owner::docker;
  rec.mounts = {{"c1", 1}};
  rec.origins = {{"c1", mount_id_origin{old_dockerd, 1000}}};
  {
    file_store st{dir};
    ASSERT_TRUE(st.load());
    ASSERT_FALSE(st.append({journal_entry::put(rec)}));
  }
  backend_timeout = 200ms;
  start();
  storage->hang_mount = true;
  auto err = test::call<std::string>(self, reg, atom::mount_v, std::string{"kv"},
                                     std::string{"c2"}, std::string{new_dockerd}, caller{});
  ASSERT_TRUE(err);
  EXPECT_EQ(err.code(), code_of(ec::timeout));
  auto dropped = release("kv", automatic("kv", "c1"));
  ASSERT_TRUE(dropped) << "only the record changes, as an Unmount's count: "
                       << describe(dropped.error());
  EXPECT_EQ(*dropped, 1u);
  EXPECT_TRUE(get("kv").mounts.empty());
  storage->release(); // the hung mount returns; the record lacks it, so it is undone
}
