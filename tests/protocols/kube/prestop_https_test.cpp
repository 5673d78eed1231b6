// The hook's wait (drain::wait_for_drain) over real HTTPS: kube_client against the stand-in
// API server, with the prestop tests' admin stand-in for the local berthd. The issue's
// other cases over HTTPS are in prestop_https_cases_test.cpp.

#include <thread>

#include <gtest/gtest.h>

#include "tests/protocols/kube/prestop_https_fixture.hpp"

using namespace berth;
using namespace berth::test;
using namespace std::chrono_literals;

TEST_F(prestop_https_test, cordoned_node_returns_right_after_the_second_deletion) {
  // The issue: cordoned, with two of this driver's attachments for this node, one of another
  // driver and one for another node; the stand-in deletes this driver's two after a few seconds.
  cordon_over_https();
  api.add_attachment({"va-1", "n1", "berth.csi.dev", "pv-1"});
  api.add_attachment({"va-2", "n1", "berth.csi.dev", "pv-2"});
  api.add_attachment({"va-other-driver", "n1", "ebs.csi.aws.com", "pv-3"});
  api.add_attachment({"va-other-node", "n2", "berth.csi.dev", "pv-4"});
  std::chrono::steady_clock::time_point second_deleted_at;
  std::thread deleter{[&] {
    // The hook is waiting: it has said for what, and its watch is open.
    ASSERT_TRUE(sink->wait_for("waiting for 2 VolumeAttachments", 10s)) << sink->text();
    ASSERT_TRUE(api.wait_for_watches(1, 10s));
    api.delete_attachment("va-1");
    api.send_bookmark();
    ASSERT_TRUE(sink->wait_for("VolumeAttachment va-1 (volume pv-1) is gone; 1 left", 10s))
      << sink->text();
    // Still waiting a period after the first deletion.
    ASSERT_TRUE(asked_again(3));
    second_deleted_at = std::chrono::steady_clock::now();
    spdlog::info("test: deleting the second attachment");
    api.delete_attachment("va-2");
  }};
  cfg.deadline = 10s;
  auto out = drain::wait_for_drain(cfg, client());
  auto returned = std::chrono::steady_clock::now();
  deleter.join();
  EXPECT_EQ(out.result, drain::prestop_result::drained) << sink->text();
  // Not before the second deletion (the other driver's and node's do not count), and at once after.
  EXPECT_TRUE(logged_in_order("test: deleting the second attachment", "node n1 is clear"))
    << sink->text();
  EXPECT_LT(secs(returned - second_deleted_at), 0.5) << sink->text();
  EXPECT_EQ(logged("node n1 is being drained (spec.unschedulable is true (cordoned)); waiting "
                   "for 2 VolumeAttachments of berth.csi.dev (va-1 (volume pv-1), va-2 (volume "
                   "pv-2)) (nothing staged or published here), deadline 10 s"),
            1u)
    << sink->text();
  EXPECT_EQ(logged("VolumeAttachment va-1 (volume pv-1) is gone; 1 left"), 1u) << sink->text();
  EXPECT_EQ(logged("VolumeAttachment va-2 (volume pv-2) is gone; 0 left"), 1u) << sink->text();
  EXPECT_EQ(logged("node n1 is clear"), 1u) << sink->text();
  EXPECT_EQ(api.requests().lists, 1u) << "the deletions come by the watch, not by polling";
  EXPECT_EQ(api.requests().unauthorized, 0u);
}

TEST_F(prestop_https_test, closed_watch_and_410_are_survived) {
  cordon_over_https();
  api.add_attachment({"va-1", "n1", "berth.csi.dev", "pv-1"});
  std::thread server{[&] {
    // Waits until the hook has made `watches` watches and `lists` lists and one watch is open.
    auto reached = [&](size_t watches, size_t lists) {
      return api.wait_until(
        [&](const fake_apiserver::counts& c, size_t open) {
          return c.watches >= watches && c.lists >= lists && open >= 1;
        },
        10s);
    };
    ASSERT_TRUE(reached(1, 1));
    api.close_watches();
    ASSERT_TRUE(reached(2, 1)) << "a closed watch is resumed";
    api.expire_resource_versions();
    ASSERT_TRUE(reached(3, 2)) << "410 makes the hook list and watch again";
    api.delete_attachment("va-1");
  }};
  cfg.deadline = 10s;
  auto out = drain::wait_for_drain(cfg, client());
  server.join();
  EXPECT_EQ(out.result, drain::prestop_result::drained) << sink->text();
  EXPECT_GE(api.requests().lists, 2u) << "410 makes the hook list again";
  EXPECT_GE(api.requests().watches, 3u);
}

TEST_F(prestop_https_test, wrong_token_ends_at_the_deadline_without_printing_it) {
  cordon_over_https();
  const std::string wrong = "not-the-token-7c41";
  config.token = wrong;
  cfg.deadline = 1500ms;
  auto t0 = std::chrono::steady_clock::now();
  auto out = drain::wait_for_drain(cfg, client_for_config());
  auto took = secs(std::chrono::steady_clock::now() - t0);
  EXPECT_NE(out.result, drain::prestop_result::drained);
  EXPECT_LT(took, 2.5);
  auto log = sink->text();
  EXPECT_NE(log.find("refused the credentials"), std::string::npos) << log;
  EXPECT_EQ(log.find(wrong), std::string::npos) << log;
  EXPECT_EQ(log.find(api.token()), std::string::npos) << log;
}
