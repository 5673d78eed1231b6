// The node agent's bookkeeping of the objects it carries out: which object an answer is
// for, in what order answers land, and what it forgets.

#include <atomic>

#include "tests/protocols/kube/agent/node_agent_fixture.hpp"

namespace berth::test {
namespace {

/// The observedGeneration a status patch writes (0 when it writes none).
int64_t generation_in(const std::string& status_patch) {
  auto at = status_patch.find("\"observedGeneration\":");
  return at == std::string::npos ? 0 : std::stoll(status_patch.substr(at + 21));
}

class node_agent_removal : public node_agent_test {
protected:
  /// A volume whose storage removal is running (held in the backend) when an operator takes
  /// its finalizer away and the controller makes a new object under the same name: the
  /// new object is `name`'s when this returns, and the removal goes on.
  std::string replace_while_removing() {
    auto name = add_volume("vol-a", 8 * mib);
    EXPECT_TRUE(eventually([&] { return ready(name); }));
    auto old_uid = volume(name)->uid;
    storage->hang_remove = true;
    EXPECT_TRUE(api->delete_object(kube::berth_volumes(), name, far()));
    EXPECT_TRUE(eventually([&] { return storage->removes.load() == 1; }));
    auto now = volume(name);
    EXPECT_TRUE(api->merge_patch(kube::berth_volumes(), name, "",
                                 kube::finalizers_patch(now->resource_version, {}), far()));
    EXPECT_FALSE(volume(name)) << "an object being deleted goes with its last finalizer";
    add_volume("vol-a", 8 * mib);
    EXPECT_NE(volume(name)->uid, old_uid);
    // The agent has taken in the new object's ADDED (and the old one's DELETED before it).
    auto added = std::stoull(volume(name)->resource_version);
    EXPECT_TRUE(eventually([&] { return api->delivered_through() >= added; }));
    storage->release();
    return name;
  }
};

TEST_F(node_agent_removal, a_new_object_under_the_name_keeps_its_finalizer) {
  auto name = replace_while_removing();
  // The removal releases the old object before the agent looks at the new one.
  ASSERT_TRUE(eventually([&] { return ready(name); }));
  auto now = volume(name);
  ASSERT_TRUE(now);
  EXPECT_EQ(now->finalizers, std::vector<std::string>{kube::storage_finalizer})
    << "the finalizer of the old object was released, not the new one's";
}

TEST_F(node_agent_removal, a_new_object_under_the_name_is_carried_out_when_the_removal_ends) {
  auto name = replace_while_removing();
  EXPECT_TRUE(eventually([&] { return ready(name); }))
    << "the new object waited for a resync (10 minutes here)";
  EXPECT_EQ(storage->creates.load(), 2);
}

TEST_F(node_agent_test, a_removal_that_fails_waits_for_a_change_before_it_is_tried_again) {
  auto name = add_volume("vol-f", 8 * mib);
  ASSERT_TRUE(eventually([&] { return ready(name); }));
  storage->fail_remove = true;
  ASSERT_TRUE(api->delete_object(kube::berth_volumes(), name, far()));
  ASSERT_TRUE(eventually([&] {
    auto obj = volume(name);
    return obj && obj->status.phase == kube::phase_deleting;
  }));
  // Its own status write is a change, so one more try follows it; that try writes the same
  // status, which is no change, and no try follows it.
  ASSERT_TRUE(eventually([&] { return storage->removes.load() == 2; }));
  storage->fail_remove = false;
  resize(name, 8 * mib + 1); // any change: the removal is tried again, and now succeeds
  EXPECT_TRUE(eventually([&] { return !volume(name); }));
  EXPECT_EQ(storage->removes.load(), 3) << "a try that nothing asked for ran between";
}

TEST_F(node_agent_test, a_deletion_that_comes_while_a_failed_create_is_answered_is_carried_out) {
  // The controller deletes a BerthVolume as soon as it reads Failed. A real API server's
  // slower writes let that deletion reach the agent before its own write of Failed has
  // returned: here the write waits until the agent has taken the deletion in.
  kube::volume_object_spec spec;
  spec.csi_name = "vol-g";
  spec.node = node;
  spec.size_bytes = 8 * mib;
  spec.limit_bytes = 4 * mib; // no size fits: the create fails (out_of_range)
  spec.access_type = "mount";
  auto name = kube::object_name_for(spec.csi_name);
  std::atomic<bool> deleted{false};
  api->set_hook([&](const object_call& call) {
    if (call.verb != "patch" || call.subresource != "status" || call.name != name
        || deleted.exchange(true)) {
      return caf::error{};
    }
    EXPECT_TRUE(api->delete_object(kube::berth_volumes(), name, far()));
    auto now = volume(name);
    EXPECT_TRUE(now && now->deleting);
    auto rv = now ? std::stoull(now->resource_version) : 0;
    EXPECT_TRUE(eventually([&] { return api->delivered_through() >= rv; }));
    return caf::error{};
  });
  ASSERT_TRUE(api->create_object(kube::berth_volumes(), kube::volume_object_json(name, spec), far()));
  EXPECT_TRUE(eventually([&] { return !volume(name); }, 5s))
    << "the deletion waited for a resync (10 minutes here): the finalizer is still there";
  EXPECT_TRUE(deleted.load()) << "the create did not fail as the test means it to";
}

TEST_F(node_agent_test, an_older_answer_never_lands_over_a_newer_one) {
  auto name = add_volume("vol-b", 8 * mib);
  ASSERT_TRUE(eventually([&] { return ready(name); }));
  // The status of generation 2 is slow to write: it waits (3 s at most) until the status
  // of generation 3 is there, as a slow API call would.
  std::atomic<bool> second_writing{false};
  api->set_hook([&](const object_call& call) {
    if (call.verb == "patch" && call.subresource == "status" && generation_in(call.body) == 2) {
      second_writing = true;
      eventually([&] {
        auto obj = volume(name);
        return obj && obj->status.observed_generation == 3;
      }, 3s);
    }
    return caf::error{};
  });
  resize(name, 16 * mib);
  ASSERT_TRUE(eventually([&] { return second_writing.load(); }));
  resize(name, 24 * mib);
  ASSERT_TRUE(eventually([&] { return api->patches(name, "status").size() == 3; }));
  auto patches = api->patches(name, "status");
  EXPECT_EQ(generation_in(patches.back()), 3);
  auto obj = volume(name);
  EXPECT_EQ(obj->status.observed_generation, 3);
  EXPECT_EQ(obj->status.capacity_bytes, 24 * mib);
}

TEST_F(node_agent_test, an_object_gone_while_no_watch_ran_is_forgotten_at_the_next_list) {
  auto name = add_volume("vol-c", 8 * mib);
  ASSERT_TRUE(eventually([&] { return ready(name); }));
  ASSERT_EQ(agent->objects_tracked(), 1u);
  api->erase_unseen(kube::berth_volumes().plural, name);
  api->expire_watches();
  EXPECT_TRUE(eventually([&] { return agent->objects_tracked() == 0; }))
    << "an empty list forgets every object";
}

TEST_F(node_agent_test, of_two_objects_the_one_a_list_lacks_is_forgotten) {
  auto kept = add_volume("vol-d", 8 * mib);
  auto gone = add_volume("vol-e", 8 * mib);
  ASSERT_TRUE(eventually([&] { return ready(kept) && ready(gone); }));
  api->erase_unseen(kube::berth_volumes().plural, gone);
  api->expire_watches();
  EXPECT_TRUE(eventually([&] { return agent->objects_tracked() == 1; }));
}

// -- capacity ------------------------------------------------------------------------------

/// The agent with a capacity interval of `interval`; the fake's 64 GiB free make a
/// meaningful change 1 % of that, about 655 MiB.
template <int interval_ms>
class node_agent_capacity : public node_agent_test {
protected:
  void adjust(kube::agent::agent_config& ac) override {
    ac.capacity.interval = std::chrono::milliseconds(interval_ms);
  }

  size_t node_writes() {
    return api->patches(node, "").size();
  }

  /// Waits until the agent measured its capacity `n` more times.
  void measured(int n) {
    auto until = storage->capacity_reads.load() + n;
    ASSERT_TRUE(eventually([&] { return storage->capacity_reads.load() >= until; }));
  }
};

using node_agent_capacity_short = node_agent_capacity<50>;
using node_agent_capacity_long = node_agent_capacity<600000>;

TEST_F(node_agent_capacity_short, a_meaningful_change_is_written_and_a_small_one_is_not) {
  ASSERT_TRUE(eventually([&] { return node_writes() == 1; })) << "the first full list writes it";
  storage->free_bytes -= 100 * mib;
  auto name = add_volume("vol-k", 8 * mib);
  ASSERT_TRUE(eventually([&] { return ready(name); }));
  measured(5);
  EXPECT_EQ(node_writes(), 1u) << "100 MiB of 64 GiB is written at the next resync, not now";
  storage->free_bytes -= 1024 * mib;
  ASSERT_TRUE(eventually([&] { return node_writes() == 2; }));
  EXPECT_NE(api->patches(node, "").back().find(std::to_string(storage->free_bytes.load())),
            std::string::npos)
    << api->patches(node, "").back();
}

TEST_F(node_agent_capacity_long, changes_within_the_interval_wait_for_its_end) {
  ASSERT_TRUE(eventually([&] { return node_writes() == 1; })) << "the first full list writes it";
  auto reads = storage->capacity_reads.load();
  for (int i = 0; i < 5; ++i) {
    storage->free_bytes -= 1024 * mib;
    auto name = add_volume("vol-l" + std::to_string(i), 8 * mib);
    ASSERT_TRUE(eventually([&] { return ready(name); }));
  }
  // Each create is followed by a report of the capacity (a read, and a write when due).
  ASSERT_TRUE(eventually([&] { return storage->capacity_reads.load() >= reads + 5; }));
  EXPECT_EQ(node_writes(), 1u) << "five changes of 1 GiB within one interval: no write yet";
}

} // namespace
} // namespace berth::test
