// The registry and its volumes driven by the test (tests/actors/driver_fixture.hpp): one
// backend call per volume, ever (docs/design.md, "A hung call blocks only its own
// volume"), through the registry: a create whose call hangs past its deadline fails, a
// retry reaches the actor that knows of the hung call, and once it returns the name
// serves a create again. A source is not removed while a copy of it is made. And the
// handles an adapter sends Mounts through name created volumes only.

#include <gtest/gtest.h>

#include <optional>

#include "actors/registry.hpp"
#include "actors/registry_direct.hpp"
#include "tests/actors/driver_fixture.hpp"
#include "tests/actors/machine_records.hpp"

using namespace berth;
using namespace std::chrono_literals;

namespace {

class registry_driver_test : public test::volume_driver_fixture {
protected:
  registry_actor reg;
  std::shared_ptr<volume_handles> handles = std::make_shared<volume_handles>();

  /// Starts the registry on the records of `initial`, as loaded from the durable state;
  /// with `host_mounts`, the host's mount points they reconcile against.
  void start_registry(std::vector<volume_record> initial = {},
                      std::shared_ptr<const std::set<std::string>> host_mounts = nullptr) {
    registry_config cfg;
    cfg.host_mounts = std::move(host_mounts);
    cfg.backends["local"] = storage;
    cfg.exec = runner;
    cfg.persistence = persistence = sys.spawn(test::fake_persistence, disk);
    cfg.backend_timeout = timeout;
    cfg.stats = stats;
    cfg.handles = handles;
    reg = sys.spawn(registry, cfg, share(std::move(initial)));
    sched.run();
  }

  void TearDown() override {
    self->send_exit(reg, caf::exit_reason::user_shutdown); // it stops its volumes
    volume_driver_fixture::TearDown();
  }

  auto start_create() { return start_to(reg, atom::create_v, std::string{"v"}, option_map{}); }

  /// A Docker volume `name` as the durable state holds it.
  static volume_record durable(const std::string& name) {
    volume_record rec;
    rec.name = name;
    rec.owner = record_owner::docker;
    rec.capacity_bytes = 64 * test::fake_backend::mib;
    return rec;
  }

  /// The volumes berthd's gauges count.
  int64_t counted() const { return test::counted_volumes(stats->volumes); }

  std::vector<volume_record> list() {
    return copies(ask_to<shared_records>(reg, atom::list_v).value);
  }
};

} // namespace

TEST_F(registry_driver_test, a_create_retried_while_its_first_call_hangs_starts_no_second_call) {
  start_registry();
  auto first = start_create();
  ASSERT_TRUE(runner->start_next()) << "the create runs, and does not return";
  advance(timeout + 1ms);
  auto timed_out = answer_of<atom::ok>(first);
  ASSERT_TRUE(timed_out.given);
  EXPECT_TRUE(is(timed_out.err, ec::timeout)) << describe(timed_out.err);
  for (int retry = 0; retry < 3; ++retry) {
    auto h = start_create();
    auto again = answer_of<atom::ok>(h);
    ASSERT_TRUE(again.given) << "refused without moving the clock";
    EXPECT_NE(describe(again.err).find("has not returned"), std::string::npos)
      << "a create beside a hung one must not succeed: " << describe(again.err);
  }
  EXPECT_EQ(runner->waiting(), 0U) << "the retries started no second create";
  EXPECT_TRUE(list().empty()) << "the name is not a volume while its create hangs";

  return_held(); // the hung create returns, late: the volume settles it in turn
  run_all_calls();
  auto h = start_create();
  run_all_calls();
  auto created = answer_of<atom::ok>(h);
  ASSERT_TRUE(created.given);
  EXPECT_FALSE(created.err) << "the name serves a create again: " << describe(created.err);
  EXPECT_EQ(list().size(), 1U);
}

TEST_F(registry_driver_test, a_source_cannot_be_removed_while_a_copy_of_it_is_made) {
  start_registry({durable("v")});
  auto copy = start_to(reg, atom::create_v, std::string{"c"}, option_map{{"clone-of", "v"}});
  EXPECT_EQ(runner->waiting(), 1U) << "the copy's call waits to run";
  auto remove_source = [this] {
    return ask_to<atom::ok>(reg, atom::remove_v, std::string{"v"}, record_owner::docker,
                            record_kind::volume);
  };
  // Not ask_to's run_all_calls: the copy's call stays where it is.
  auto h =
    start_to(reg, atom::remove_v, std::string{"v"}, record_owner::docker, record_kind::volume);
  auto refused = answer_of<atom::ok>(h);
  ASSERT_TRUE(refused.given) << "refused at once";
  EXPECT_TRUE(is(refused.err, ec::in_use)) << describe(refused.err);
  EXPECT_NE(describe(refused.err).find("is being copied"), std::string::npos)
    << describe(refused.err);
  EXPECT_EQ(storage->removes, 0);

  run_all_calls(); // the copy ends
  auto copied = answer_of<atom::ok>(copy);
  ASSERT_TRUE(copied.given);
  EXPECT_FALSE(copied.err) << describe(copied.err);
  auto removed = remove_source();
  ASSERT_TRUE(removed.given);
  EXPECT_FALSE(removed.err) << "removed once the copy has finished: " << describe(removed.err);
  EXPECT_EQ(storage->removes, 1);
}

TEST_F(registry_driver_test, the_handles_name_the_created_volumes_and_no_other) {
  start_registry({durable("old")});
  EXPECT_TRUE(handles->find("old")) << "a volume of the durable state is served at once";

  auto h = start_create();
  EXPECT_FALSE(handles->find("v")) << "while it is being created, the registry answers for it";
  run_all_calls();
  auto created = answer_of<atom::ok>(h);
  ASSERT_TRUE(created.given && !created.err) << describe(created.err);
  EXPECT_TRUE(handles->find("v"));

  auto removed = ask_to<atom::ok>(reg, atom::remove_v, std::string{"v"}, record_owner::docker,
                                  record_kind::volume);
  ASSERT_TRUE(removed.given && !removed.err) << describe(removed.err);
  EXPECT_FALSE(handles->find("v")) << "a removed name goes back to the registry";
  EXPECT_TRUE(handles->find("old"));
}

TEST_F(registry_driver_test, a_loaded_volume_the_host_agrees_with_gets_its_actor_when_first_asked) {
  auto held = durable("held"); // mounted by a container, but its host mount is gone
  held.mounts["c1"] = 1;
  held.mounted = true;
  held.mountpoint = "/fake/held";
  start_registry({durable("idle"), durable("kept"), held},
                 std::make_shared<const std::set<std::string>>());
  EXPECT_FALSE(handles->find("idle")) << "nothing to reconcile: dormant, no actor yet";
  EXPECT_FALSE(handles->find("kept"));
  EXPECT_TRUE(handles->find("held")) << "its reconciliation mounts it again, at once";
  run_all_calls();
  EXPECT_EQ(storage->mounts, 1) << "the held volume's mount was made again";
  EXPECT_EQ(list().size(), 3U) << "a dormant volume is listed";
  EXPECT_EQ(counted(), 3) << "and counted";

  auto got = ask_to<volume_record>(reg, atom::get_v, std::string{"idle"});
  ASSERT_TRUE(got.given && !got.err) << describe(got.err);
  EXPECT_EQ(got.value, durable("idle")) << "woken on the record it was loaded with";
  EXPECT_TRUE(handles->find("idle")) << "woken, it is served straight from now on";
  EXPECT_EQ(counted(), 3) << "counted once, not again when woken";

  auto created = ask_to<atom::ok>(reg, atom::create_v, std::string{"kept"}, option_map{});
  ASSERT_TRUE(created.given && !created.err)
    << "a create of a loaded name is idempotent: " << describe(created.err);
  EXPECT_EQ(storage->creates, 0) << "the loaded volume answered it; nothing was made again";
  EXPECT_TRUE(handles->find("kept"));

  auto removed = ask_to<atom::ok>(reg, atom::remove_v, std::string{"idle"}, record_owner::docker,
                                  record_kind::volume);
  ASSERT_TRUE(removed.given && !removed.err) << describe(removed.err);
  EXPECT_EQ(counted(), 2);
  EXPECT_EQ(list().size(), 2U);
}

namespace {

/// What became of a request sent straight to the registry with a direct_reply.
template <class R>
struct direct_outcome {
  std::optional<caf::expected<R>> answer;
  int answers = 0;

  direct_reply<R> reply() {
    return direct_reply<R>{[this](caf::expected<R> x) {
                             answer = std::move(x);
                             ++answers;
                           },
                           [this] { answer = make_error(ec::internal, "dropped"); }};
  }
};

} // namespace

// The adapters send a creation and a removal straight to the registry, whose answer the
// message carries (docs/design.md, "Three hops"): the same checks and outcomes as a
// request from an actor, answered once.
TEST_F(registry_driver_test, a_create_and_a_remove_sent_straight_are_answered_through_them) {
  start_registry();
  direct_outcome<atom::ok> created;
  caf::anon_send(reg, atom::create_v, std::string{"v"}, option_map{}, created.reply());
  sched.run();
  EXPECT_FALSE(created.answer) << "not before the backend's create ran";
  run_all_calls();
  ASSERT_TRUE(created.answer && *created.answer) << describe(created.answer->error());
  EXPECT_EQ(created.answers, 1);
  EXPECT_TRUE(handles->find("v"));

  direct_outcome<volume_record> csi;
  volume_spec spec;
  spec.backend = "local";
  spec.required_bytes = test::fake_backend::mib;
  caf::anon_send(reg, atom::create_v, std::string{"pvc-1"}, spec, csi.reply());
  sched.run();
  run_all_calls();
  ASSERT_TRUE(csi.answer && *csi.answer) << describe(csi.answer->error());
  EXPECT_EQ((*csi.answer)->name, "pvc-1");
  EXPECT_EQ(owner_of(**csi.answer), record_owner::csi);

  direct_outcome<atom::ok> wrong_owner;
  caf::anon_send(reg, atom::remove_v, std::string{"pvc-1"}, record_owner::docker,
                 record_kind::volume, wrong_owner.reply());
  sched.run();
  ASSERT_TRUE(wrong_owner.answer);
  EXPECT_TRUE(is(wrong_owner.answer->error(), ec::not_found)) << "CSI's volume is not Docker's";

  direct_outcome<atom::ok> removed;
  caf::anon_send(reg, atom::remove_v, std::string{"v"}, record_owner::docker, record_kind::volume,
                 removed.reply());
  sched.run();
  run_all_calls();
  ASSERT_TRUE(removed.answer && *removed.answer) << describe(removed.answer->error());
  EXPECT_FALSE(handles->find("v"));
  ASSERT_EQ(list().size(), 1U);
  EXPECT_EQ(list()[0].name, "pvc-1");
}

TEST_F(registry_driver_test, a_bad_create_sent_straight_is_refused_through_it_and_changes_nothing) {
  start_registry();
  direct_outcome<atom::ok> docker;
  caf::anon_send(reg, atom::create_v, std::string{"../x"}, option_map{}, docker.reply());
  direct_outcome<volume_record> csi;
  volume_spec spec;
  spec.backend = "nonesuch";
  caf::anon_send(reg, atom::create_v, std::string{"pvc-1"}, spec, csi.reply());
  sched.run();
  ASSERT_TRUE(docker.answer);
  EXPECT_TRUE(is(docker.answer->error(), ec::invalid_argument)) << describe(docker.answer->error());
  EXPECT_EQ(docker.answers, 1);
  ASSERT_TRUE(csi.answer);
  EXPECT_NE(describe(csi.answer->error()).find("unknown backend \"nonesuch\""), std::string::npos)
    << describe(csi.answer->error());
  EXPECT_TRUE(list().empty());
  EXPECT_EQ(storage->creates, 0);
}

TEST_F(registry_driver_test, a_request_sent_straight_to_a_registry_that_quit_is_unavailable) {
  start_registry();
  self->send_exit(reg, caf::exit_reason::user_shutdown);
  sched.run();
  std::optional<caf::expected<atom::ok>> answer;
  send_to_registry<atom::ok>(
    reg, [&](caf::expected<atom::ok> x) { answer = std::move(x); }, atom::remove_v,
    std::string{"v"}, record_owner::docker, record_kind::volume);
  sched.run();
  ASSERT_TRUE(answer) << "the dropped request answers itself";
  EXPECT_TRUE(is(answer->error(), ec::unavailable)) << describe(answer->error());
  EXPECT_NE(describe(answer->error()).find("berthd is stopping"), std::string::npos);
}
