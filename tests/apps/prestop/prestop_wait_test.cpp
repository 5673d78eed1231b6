// drain::wait_for_drain against the fake Kubernetes API and a stand-in of berthd's
// admin API: when it returns, what it waits for, and how it survives a failing API.
#include "apps/prestop/prestop_wait.hpp"

#include <thread>

#include "tests/apps/prestop/prestop_fixture.hpp"

namespace berth::test {
namespace {

using namespace std::chrono_literals;

TEST_F(prestop_fixture, a_node_not_being_drained_returns_at_once_without_watching) {
  kube::node_info n;
  n.found = true;
  n.taints = {{"dedicated", "db", "NoSchedule"}};
  kube->set_node(n);
  kube->add(va("va-1", "n1", "berth.csi.dev", "pv-1"));
  admin->set({staged("pvc-1")});
  auto t0 = clock::now();
  auto out = run();
  EXPECT_LT(secs(clock::now() - t0), 0.2);
  EXPECT_EQ(out.result, drain::prestop_result::not_draining);
  EXPECT_EQ(kube->lists(), 0);
  EXPECT_EQ(kube->watches(), 0);
  EXPECT_EQ(logged("node n1 is not being drained (spec.unschedulable is false; taints: "
                   "dedicated=db:NoSchedule"),
            1u)
    << sink->text();
}

TEST_F(prestop_fixture, a_cordoned_node_waits_for_its_own_attachments_only) {
  cordon();
  kube->add(va("va-1", "n1", "berth.csi.dev", "pv-1"));
  kube->add(va("va-2", "n1", "berth.csi.dev", "pv-2"));
  kube->add(va("va-other-driver", "n1", "ebs.csi.aws.com", "pv-3"));
  kube->add(va("va-other-node", "n2", "berth.csi.dev", "pv-4"));
  clock::time_point second_deleted_at;
  std::thread deleter{[&] {
    // The hook is waiting: it has said for what, and its watch is open.
    EXPECT_TRUE(sink->wait_for("waiting for 2 VolumeAttachments", 10s)) << sink->text();
    EXPECT_TRUE(kube->wait_for([](fake_kube& k) { return k.watches_unlocked() >= 1; }));
    kube->remove("va-1");
    EXPECT_TRUE(kube->wait_for([](fake_kube& k) { return k.delivered_unlocked() >= 1; }));
    // Still waiting a period after the first deletion.
    EXPECT_TRUE(asked_again(3));
    second_deleted_at = clock::now();
    spdlog::info("test: deleting the second attachment");
    kube->remove("va-2");
  }};
  auto out = run();
  auto returned = clock::now();
  deleter.join();
  EXPECT_EQ(out.result, drain::prestop_result::drained);
  EXPECT_TRUE(logged_in_order("test: deleting the second attachment", "node n1 is clear"))
    << sink->text();
  EXPECT_LT(secs(returned - second_deleted_at), 0.5);
  EXPECT_EQ(logged("node n1 is being drained (spec.unschedulable is true (cordoned)); waiting "
                   "for 2 VolumeAttachments of berth.csi.dev (va-1 (volume pv-1), va-2 (volume "
                   "pv-2)) (nothing staged or published here), deadline 10 s"),
            1u)
    << sink->text();
  EXPECT_EQ(logged("VolumeAttachment va-1 (volume pv-1) is gone; 1 left"), 1u) << sink->text();
  EXPECT_EQ(logged("node n1 is clear"), 1u) << sink->text();
  EXPECT_EQ(kube->lists(), 1);
}

TEST_F(prestop_fixture, a_drained_node_with_nothing_left_returns_at_once) {
  cordon();
  kube->add(va("va-other-driver", "n1", "ebs.csi.aws.com", "pv-3"));
  auto t0 = clock::now();
  auto out = run();
  EXPECT_EQ(out.result, drain::prestop_result::drained);
  EXPECT_LT(secs(clock::now() - t0), 0.3);
  EXPECT_EQ(logged("node n1 is being drained (spec.unschedulable is true (cordoned)); no "
                   "VolumeAttachment of berth.csi.dev for it and nothing staged or published here"),
            1u)
    << sink->text();
}

TEST_F(prestop_fixture, attachments_never_removed_return_at_the_deadline_naming_them) {
  kube::node_info n;
  n.found = true;
  n.taints = {{"karpenter.sh/disrupted", "", "NoSchedule"}};
  kube->set_node(n);
  kube->add(va("va-1", "n1", "berth.csi.dev", "pv-1"));
  kube->add(va("va-2", "n1", "berth.csi.dev", ""));
  cfg.deadline = 1500ms;
  auto t0 = clock::now();
  auto out = run();
  auto took = secs(clock::now() - t0);
  EXPECT_GE(took, 1.5);
  EXPECT_LT(took, 1.9);
  EXPECT_EQ(out.result, drain::prestop_result::deadline);
  ASSERT_EQ(out.attachments.size(), 2u);
  EXPECT_EQ(out.attachments[0].name, "va-1");
  EXPECT_EQ(logged("deadline of 1.5 s reached on node n1"), 1u) << sink->text();
  EXPECT_EQ(logged("VolumeAttachment va-1 (volume pv-1) of berth.csi.dev for node n1 is still "
                   "present"),
            1u)
    << sink->text();
  EXPECT_EQ(logged("VolumeAttachment va-2 (inline volume) of berth.csi.dev for node n1 is still "
                   "present"),
            1u)
    << sink->text();
  // One LIST and one watch that waited: no polling.
  EXPECT_EQ(kube->lists(), 1);
  EXPECT_EQ(kube->watches(), 1);
}

TEST_F(prestop_fixture, a_node_that_is_gone_waits_as_for_a_drain) {
  kube->set_node(kube::node_info{}); // found = false: 404
  kube->add(va("va-1", "n1", "berth.csi.dev", "pv-1"));
  std::thread deleter{[&] {
    EXPECT_TRUE(sink->wait_for("node n1 is being drained", 10s)) << sink->text();
    EXPECT_TRUE(kube->wait_for([](fake_kube& k) { return k.watches_unlocked() >= 1; }));
    // Still waiting a period later (the attachments have not changed since the LIST).
    EXPECT_TRUE(asked_again(2));
    spdlog::info("test: deleting the attachment");
    kube->remove("va-1");
  }};
  auto out = run();
  deleter.join();
  EXPECT_EQ(out.result, drain::prestop_result::drained);
  EXPECT_TRUE(logged_in_order("test: deleting the attachment", "node n1 is clear")) << sink->text();
  EXPECT_NE(out.reason.find("404"), std::string::npos) << out.reason;
  EXPECT_EQ(logged("node n1 is being drained (node not found (404)"), 1u) << sink->text();
}

TEST_F(prestop_fixture, a_closed_watch_resumes_and_410_gone_lists_again) {
  cordon();
  kube->add(va("va-1", "n1", "berth.csi.dev", "pv-1"));
  kube->add(va("va-2", "n1", "berth.csi.dev", "pv-2"));
  kube->add(va("va-3", "n1", "berth.csi.dev", "pv-3"));
  auto listed_rv = kube->resource_version();
  std::string rv_after_delete;
  std::thread server{[&] {
    kube->wait_for([](fake_kube& k) { return k.watches_unlocked() >= 1; });
    kube->remove("va-1");
    rv_after_delete = kube->resource_version();
    kube->wait_for([](fake_kube& k) { return k.delivered_unlocked() >= 1; });
    kube->close_watch(); // mid-stream: the hook watches again from the delete's version
    kube->wait_for([](fake_kube& k) { return k.watches_unlocked() >= 2; });
    kube->remove("va-2");
    kube->wait_for([](fake_kube& k) { return k.delivered_unlocked() >= 2; });
    // An event the watch never sees, then 410: only a fresh LIST learns of it.
    kube->remove_silently("va-3");
    kube->expire_watch();
  }};
  auto out = run();
  server.join();
  EXPECT_EQ(out.result, drain::prestop_result::drained) << sink->text();
  EXPECT_EQ(kube->lists(), 2);
  auto rvs = kube->watch_versions();
  ASSERT_GE(rvs.size(), 2u);
  EXPECT_EQ(rvs[0], listed_rv);
  EXPECT_EQ(rvs[1], rv_after_delete);
  EXPECT_EQ(logged("(410 Gone); listing again"), 1u) << sink->text();
  EXPECT_EQ(logged("VolumeAttachment va-3 (volume pv-3) is gone (seen on re-list)"), 1u)
    << sink->text();
}

TEST_F(prestop_fixture, a_bookmark_moves_the_resource_version_the_next_watch_starts_from) {
  cordon();
  kube->add(va("va-1", "n1", "berth.csi.dev", "pv-1"));
  std::string rv_after_bookmark;
  std::thread server{[&] {
    kube->wait_for([](fake_kube& k) { return k.watches_unlocked() >= 1; });
    kube->bookmark();
    rv_after_bookmark = kube->resource_version();
    kube->wait_for([](fake_kube& k) { return k.delivered_unlocked() >= 1; });
    kube->close_watch();
    kube->wait_for([](fake_kube& k) { return k.watches_unlocked() >= 2; });
    kube->remove("va-1");
  }};
  auto out = run();
  server.join();
  EXPECT_EQ(out.result, drain::prestop_result::drained) << sink->text();
  auto rvs = kube->watch_versions();
  ASSERT_GE(rvs.size(), 2u);
  EXPECT_EQ(rvs[1], rv_after_bookmark);
  EXPECT_EQ(kube->lists(), 1);
}

TEST_F(prestop_fixture, an_unreachable_api_is_logged_once_retried_with_backoff_until_the_deadline) {
  kube->fail_all(make_error(ec::unavailable, "https://10.96.0.1:443: connect: Connection refused"));
  cfg.deadline = 2s;
  auto t0 = clock::now();
  auto out = run();
  auto took = secs(clock::now() - t0);
  EXPECT_EQ(out.result, drain::prestop_result::node_unknown);
  EXPECT_GE(took, 2.0);
  EXPECT_LT(took, 2.4);
  // 0, 0.25, 0.75, 1.75 s: four calls, not a tight loop.
  EXPECT_GE(kube->gets(), 3);
  EXPECT_LE(kube->gets(), 5);
  EXPECT_EQ(logged("the Kubernetes API is unreachable while reading node n1: "
                   "https://10.96.0.1:443: connect: Connection refused; retrying"),
            1u)
    << sink->text();
  EXPECT_EQ(logged("could not read node n1"), 1u) << sink->text();
}

TEST_F(prestop_fixture, refused_credentials_on_the_list_are_logged_once_and_retried_until_the_deadline) {
  cordon();
  kube->fail_attachments(make_error(ec::failed_precondition,
                                    "the Kubernetes API refused the credentials (401)"));
  cfg.deadline = 2s;
  auto t0 = clock::now();
  auto out = run();
  auto took = secs(clock::now() - t0);
  EXPECT_EQ(out.result, drain::prestop_result::deadline);
  EXPECT_FALSE(out.listed);
  EXPECT_GE(took, 2.0);
  EXPECT_LT(took, 2.4);
  EXPECT_GE(kube->lists(), 3);
  EXPECT_LE(kube->lists(), 5);
  EXPECT_EQ(logged("refused the credentials while listing VolumeAttachments"), 1u)
    << sink->text();
  EXPECT_EQ(logged("the VolumeAttachments of berth.csi.dev could not be listed (last error: the "
                   "Kubernetes API refused the credentials (401))"),
            1u)
    << sink->text();
}

TEST_F(prestop_fixture, a_volume_still_staged_here_holds_the_node_until_it_is_unstaged) {
  cordon();
  auto pub = staged("pvc-2");
  pub.staging_path.clear();
  pub.published["/var/lib/kubelet/pods/p/volumes/kubernetes.io~csi/pvc-2/mount"] = {};
  admin->set({staged("pvc-1"), pub});
  clock::time_point cleared_at;
  int asked_before_clear = 0;
  std::thread kubelet{[&] {
    // The hook is waiting, and still a period later (no attachment changes meanwhile).
    EXPECT_TRUE(sink->wait_for("waiting for 2 staged or published volumes", 10s)) << sink->text();
    EXPECT_TRUE(asked_again(2));
    cleared_at = clock::now();
    spdlog::info("test: unstaging the volumes");
    asked_before_clear = admin->set({});
  }};
  auto out = run();
  auto returned = clock::now();
  int asked_at_return = admin->requests();
  kubelet.join();
  EXPECT_EQ(out.result, drain::prestop_result::drained);
  EXPECT_TRUE(logged_in_order("test: unstaging the volumes", "node n1 is clear")) << sink->text();
  // Asked every 500 ms: seen by the next request, one period after the clear (which came
  // right after a request), with 0.5 s to spare on a busy machine.
  EXPECT_EQ(asked_at_return, asked_before_clear + 1);
  EXPECT_LT(secs(returned - cleared_at), 1.0);
  EXPECT_EQ(logged("waiting for 2 staged or published volumes (pvc-1 (staged), pvc-2 (1 "
                   "target)) (no VolumeAttachment of berth.csi.dev for it), deadline 10 s"),
            1u)
    << sink->text();
  // Periodic, not a tight loop: about two requests a second, over at least one period.
  EXPECT_LE(admin->requests(), 5);
  auto asked = admin->request_times();
  ASSERT_GE(asked.size(), 3u);
  EXPECT_GE(secs(asked.back() - asked.front()), 0.5);
}

TEST_F(prestop_fixture, a_berthd_that_does_not_answer_counts_as_holding_volumes) {
  cordon();
  admin.reset(); // no admin socket
  cfg.deadline = 1s;
  auto out = run();
  EXPECT_EQ(out.result, drain::prestop_result::deadline);
  EXPECT_FALSE(out.local_known);
  EXPECT_EQ(logged("berthd's admin API does not answer"), 1u) << sink->text();
  EXPECT_EQ(logged("whether volumes are still staged or published is unknown"), 1u)
    << sink->text();
}

TEST_F(prestop_fixture, paged_lists_are_read_to_the_end) {
  cordon();
  for (int i = 0; i < 5; ++i) {
    kube->add(va("va-" + std::to_string(i), "n1", "berth.csi.dev", "pv"));
  }
  cfg.page_limit = 2;
  cfg.deadline = 1s;
  auto out = run();
  EXPECT_EQ(out.result, drain::prestop_result::deadline);
  EXPECT_EQ(out.attachments.size(), 5u);
  EXPECT_EQ(kube->lists(), 3);
}

} // namespace
} // namespace berth::test
