// The cases the preStop wait must handle (docs/design.md, "A node drain waits for its
// volumes") over real HTTPS, each against the stand-in API server (self-signed CA from its
// kubeconfig, bearer token demanded) with the client made as `berthd prestop` makes it,
// and the admin stand-in for the local berthd. The drained-node,
// closed-watch/410 and wrong-token cases are in prestop_https_test.cpp.

#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "tests/protocols/kube/prestop_https_fixture.hpp"

namespace berth::test {
namespace {

using namespace std::chrono_literals;

TEST_F(prestop_https_test, not_draining_returns_at_once_and_says_why) {
  api.set_node("n1", {true, false, {{"dedicated", "db", "NoSchedule"}}});
  api.add_attachment({"va-1", "n1", "berth.csi.dev", "pv-1"});
  admin->set({staged("pvc-1")});
  auto t0 = clock::now();
  auto out = run_over_https();
  auto took = secs(clock::now() - t0);
  EXPECT_EQ(out.result, drain::prestop_result::not_draining) << sink->text();
  EXPECT_LT(took, 0.3) << "one GET of the Node over HTTPS, nothing else";
  EXPECT_EQ(logged("node n1 is not being drained (spec.unschedulable is false; taints: "
                   "dedicated=db:NoSchedule (none of node.kubernetes.io/unschedulable"),
            1u)
    << sink->text();
  EXPECT_EQ(logged("returning at once"), 1u) << sink->text();
  auto seen = api.requests();
  EXPECT_EQ(seen.node_gets, 1u);
  EXPECT_EQ(seen.lists, 0u);
  EXPECT_EQ(seen.watches, 0u);
  EXPECT_EQ(admin->requests(), 0) << "a node not being drained does not ask berthd";
}

TEST_F(prestop_https_test, attachments_never_removed_return_at_the_deadline_naming_them) {
  api.set_node("n1", {true, false, {{"karpenter.sh/disrupted", "", "NoSchedule"}}});
  api.add_attachment({"va-1", "n1", "berth.csi.dev", "pv-1"});
  api.add_attachment({"va-2", "n1", "berth.csi.dev", ""});
  api.add_attachment({"va-other-driver", "n1", "ebs.csi.aws.com", "pv-3"});
  cfg.deadline = 2s;
  auto t0 = clock::now();
  auto out = run_over_https();
  auto took = secs(clock::now() - t0);
  EXPECT_EQ(out.result, drain::prestop_result::deadline) << sink->text();
  EXPECT_GE(took, 2.0);
  EXPECT_LT(took, 2.4);
  ASSERT_EQ(out.attachments.size(), 2u) << sink->text();
  EXPECT_EQ(out.attachments[0].name, "va-1");
  EXPECT_EQ(out.attachments[1].name, "va-2");
  EXPECT_EQ(logged("deadline of 2 s reached on node n1"), 1u) << sink->text();
  EXPECT_EQ(logged("VolumeAttachment va-1 (volume pv-1) of berth.csi.dev for node n1 is still "
                   "present"),
            1u)
    << sink->text();
  EXPECT_EQ(logged("VolumeAttachment va-2 (inline volume) of berth.csi.dev for node n1 is still "
                   "present"),
            1u)
    << sink->text();
  EXPECT_EQ(logged("va-other-driver"), 0u) << sink->text();
  // One LIST and a watch that waited (resumed at most once): no polling.
  auto seen = api.requests();
  EXPECT_EQ(seen.lists, 1u);
  EXPECT_GE(seen.watches, 1u);
  EXPECT_LE(seen.watches, 2u);
}

TEST_F(prestop_https_test, node_gone_404_waits_as_for_a_drain) {
  // No Node n1 on the stand-in: its GET answers a 404 Status.
  api.add_attachment({"va-1", "n1", "berth.csi.dev", "pv-1"});
  api.add_attachment({"va-other-driver", "n1", "ebs.csi.aws.com", "pv-3"});
  clock::time_point deleted_at;
  std::thread deleter{[&] {
    // The hook is waiting: it has said for what, and its watch is open.
    ASSERT_TRUE(sink->wait_for("waiting for 1 VolumeAttachment", 10s)) << sink->text();
    ASSERT_TRUE(api.wait_for_watches(1, 10s));
    // Still waiting a period later (the attachments have not changed since the LIST).
    ASSERT_TRUE(asked_again(2));
    deleted_at = clock::now();
    spdlog::info("test: deleting the attachment");
    api.delete_attachment("va-1");
  }};
  auto out = run_over_https();
  auto returned = clock::now();
  deleter.join();
  EXPECT_EQ(out.result, drain::prestop_result::drained) << sink->text();
  EXPECT_TRUE(logged_in_order("test: deleting the attachment", "node n1 is clear")) << sink->text();
  EXPECT_LT(secs(returned - deleted_at), 0.5) << sink->text();
  EXPECT_NE(out.reason.find("404"), std::string::npos) << out.reason;
  EXPECT_EQ(logged("node n1 is being drained (node not found (404): it is being deleted); "
                   "waiting for 1 VolumeAttachment of berth.csi.dev (va-1 (volume pv-1))"),
            1u)
    << sink->text();
  EXPECT_EQ(api.requests().node_gets, 1u) << "a 404 is an answer, not a failure to retry";
}

TEST_F(prestop_https_test, node_gone_404_with_attachments_left_returns_at_the_deadline_naming_them) {
  api.add_attachment({"va-1", "n1", "berth.csi.dev", "pv-1"});
  cfg.deadline = 1500ms;
  auto t0 = clock::now();
  auto out = run_over_https();
  auto took = secs(clock::now() - t0);
  EXPECT_EQ(out.result, drain::prestop_result::deadline) << sink->text();
  EXPECT_GE(took, 1.5);
  EXPECT_LT(took, 1.9);
  EXPECT_EQ(logged("node n1 is being drained (node not found (404)"), 1u) << sink->text();
  EXPECT_EQ(logged("VolumeAttachment va-1 (volume pv-1) of berth.csi.dev for node n1 is still "
                   "present"),
            1u)
    << sink->text();
}

class prestop_https_unreachable_test : public prestop_https_test {
protected:
  /// Calls the hook made for `what` that failed: one warn line, then one debug line each.
  size_t failed_calls(const std::string& warn, const std::string& what) {
    return logged(warn) + logged("prestop: " + what + " failed again");
  }
};

TEST_F(prestop_https_unreachable_test, api_unreachable_from_the_start_retries_with_backoff_until_the_deadline) {
  // A port nothing listens on: the stand-in's own, once it is stopped.
  cordon_over_https();
  api.stop();
  auto server = api.server_url();
  cfg.deadline = 2s;
  auto t0 = clock::now();
  auto out = run_over_https();
  auto took = secs(clock::now() - t0);
  EXPECT_EQ(out.result, drain::prestop_result::node_unknown) << sink->text();
  EXPECT_GE(took, 2.0);
  EXPECT_LT(took, 2.4);
  EXPECT_EQ(logged("the Kubernetes API is unreachable while reading node n1: kube API " + server
                   + ": GET /api/v1/nodes/n1: connect: Connection refused; retrying with backoff "
                     "until the deadline"),
            1u)
    << sink->text();
  EXPECT_EQ(logged("could not read node n1 from the Kubernetes API within the deadline of 2 s"),
            1u)
    << sink->text();
  // Backoff 0, 0.25, 0.75, 1.75 s: four connections, not a tight loop.
  auto calls = failed_calls("unreachable while reading node n1", "reading node n1");
  EXPECT_GE(calls, 3u) << sink->text();
  EXPECT_LE(calls, 5u) << sink->text();
}

TEST_F(prestop_https_unreachable_test, api_gone_mid_wait_retries_with_backoff_and_names_what_is_left) {
  cordon_over_https();
  api.add_attachment({"va-1", "n1", "berth.csi.dev", "pv-1"});
  std::thread outage{[&] {
    ASSERT_TRUE(api.wait_for_watches(1, 5s));
    api.stop(); // the open watch ends abruptly; every reconnect is refused
  }};
  cfg.deadline = 2s;
  auto t0 = clock::now();
  auto out = run_over_https();
  auto took = secs(clock::now() - t0);
  outage.join();
  EXPECT_EQ(out.result, drain::prestop_result::deadline) << sink->text();
  EXPECT_GE(took, 2.0);
  EXPECT_LT(took, 2.4);
  EXPECT_EQ(logged("the Kubernetes API is unreachable while watching VolumeAttachments"), 1u)
    << sink->text();
  EXPECT_EQ(logged("VolumeAttachment va-1 (volume pv-1) of berth.csi.dev for node n1 is still "
                   "present"),
            1u)
    << sink->text();
  // The dropped watch and the refused reconnects, with backoff over less than 2 s.
  auto calls = failed_calls("unreachable while watching VolumeAttachments",
                            "watching VolumeAttachments");
  EXPECT_GE(calls, 2u) << sink->text();
  EXPECT_LE(calls, 5u) << sink->text();
}

TEST_F(prestop_https_test, the_local_berthd_still_has_a_staged_volume_waits_for_it) {
  cordon_over_https();
  api.add_attachment({"va-other-driver", "n1", "ebs.csi.aws.com", "pv-3"});
  admin->set({staged("pvc-1")});
  clock::time_point unstaged_at;
  int asked_before_unstage = 0;
  std::thread kubelet{[&] {
    // The hook is waiting, and still a period later (no attachment changes meanwhile).
    ASSERT_TRUE(sink->wait_for("waiting for 1 staged or published volume", 10s)) << sink->text();
    ASSERT_TRUE(asked_again(2));
    unstaged_at = clock::now();
    spdlog::info("test: unstaging the volume");
    asked_before_unstage = admin->set({});
  }};
  auto out = run_over_https();
  auto returned = clock::now();
  int asked_at_return = admin->requests();
  kubelet.join();
  EXPECT_EQ(out.result, drain::prestop_result::drained) << sink->text();
  EXPECT_TRUE(logged_in_order("test: unstaging the volume", "node n1 is clear")) << sink->text();
  // berthd is asked every 500 ms: seen by the next request, one period after the unstaging
  // (which came right after a request), with 0.5 s to spare on a busy machine.
  EXPECT_EQ(asked_at_return, asked_before_unstage + 1) << sink->text();
  EXPECT_LT(secs(returned - unstaged_at), 1.0) << sink->text();
  EXPECT_EQ(logged("node n1 is being drained (spec.unschedulable is true (cordoned)); waiting "
                   "for 1 staged or published volume (pvc-1 (staged)) (no VolumeAttachment of "
                   "berth.csi.dev for it), deadline 10 s"),
            1u)
    << sink->text();
  EXPECT_EQ(logged("berthd has no volume staged or published any more"), 1u) << sink->text();
  EXPECT_EQ(api.requests().lists, 1u);
  EXPECT_LE(admin->requests(), 5) << "asked periodically, not in a tight loop";
  auto asked = admin->request_times();
  ASSERT_GE(asked.size(), 3u);
  EXPECT_GE(secs(asked.back() - asked.front()), 0.5) << "asked over at least one period";
}

} // namespace
} // namespace berth::test
