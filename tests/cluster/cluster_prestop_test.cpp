// `berthd prestop` as the node's preStop hook runs it, with the node's ServiceAccount: it waits
// on a cordoned Node while a VolumeAttachment of berth names it, and not on a Node that is
// not being drained (a Node made without a kubelet keeps the not-ready taint, which is no
// drain).

#include "tests/cluster/cluster_fixture.hpp"

namespace berth::cluster_test {

namespace {

using namespace std::chrono_literals;

const kube::resource_ref volume_attachments{"/apis/storage.k8s.io/v1", "volumeattachments", ""};

std::chrono::steady_clock::time_point soon() {
  return std::chrono::steady_clock::now() + 10s;
}

} // namespace

TEST_F(cluster, prestop_waits_on_a_drained_node_until_its_attachments_are_gone) {
  auto hook = [&](const std::string& node, const std::string& log) {
    return std::vector<std::string>{csi_test::berthd_process::binary(), "prestop", "--node-name", node,
                                    "--kubeconfig", root_ + "/api/kubeconfig-node",
                                    "--admin-socket", berthd(node == "n1" ? 1 : 2).state_dir() + "/admin.sock",
                                    "--deadline-s", "120", "--log-file", log};
  };
  // n2 is not being drained: the hook returns at once.
  child_process undrained;
  auto log2 = root_ + "/prestop-n2.log";
  ASSERT_EQ(undrained.start(hook("n2", log2), root_ + "/prestop-n2.out"), "");
  ASSERT_TRUE(undrained.ended_within(20s)) << text_of(log2);
  EXPECT_NE(text_of(log2).find("is not being drained"), std::string::npos) << text_of(log2);

  // n1 is cordoned while a VolumeAttachment of berth names it: the hook waits for it.
  ASSERT_TRUE(api().create_object(volume_attachments, R"({"apiVersion":"storage.k8s.io/v1",
    "kind":"VolumeAttachment","metadata":{"name":"va-n1"},"spec":{"attacher":"berth.csi.dev",
    "nodeName":"n1","source":{"persistentVolumeName":"pv-n1"}}})", soon()));
  ASSERT_TRUE(api().merge_patch(kube::nodes(), "n1", "", R"({"spec":{"unschedulable":true}})", soon()));
  child_process drained;
  auto log1 = root_ + "/prestop-n1.log";
  ASSERT_EQ(drained.start(hook("n1", log1), root_ + "/prestop-n1.out"), "");
  ASSERT_TRUE(eventually([&] { return text_of(log1).find("waiting for") != std::string::npos; }))
    << text_of(log1);
  EXPECT_FALSE(drained.ended_within(1s)) << "the hook returned with the attachment there\n" << text_of(log1);
  ASSERT_TRUE(api().delete_object(volume_attachments, "va-n1", soon()));
  EXPECT_TRUE(drained.ended_within(20s)) << text_of(log1);
  EXPECT_NE(text_of(log1).find("is clear"), std::string::npos) << text_of(log1);
}

} // namespace berth::cluster_test
