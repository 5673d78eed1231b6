// The cluster mode when a volume's Node fails: the controller says so in the volume's
// condition (not Ready, then gone), and a Node deleted for good releases its volumes with an
// Event (docs/design.md, "Volume health"; docs/running.md, "berth on a cluster").

#include "tests/cluster/cluster_fixture.hpp"

namespace berth::cluster_test {

TEST_F(cluster, a_node_deleted_for_good_releases_its_volumes_with_an_event) {
  // n3 as kubelet registered it, and as the node lifecycle controller left it once kubelet
  // stopped reporting: Ready Unknown.
  ASSERT_TRUE(api().create_object(
    kube::nodes(),
    R"({"apiVersion":"v1","kind":"Node","metadata":{"name":"n3","annotations":{"capacity.berth.csi.dev/block":"1000000000000"}},)"
    R"("status":{"conditions":[{"type":"Ready","status":"Unknown","lastTransitionTime":"2026-12-08T01:00:00Z","reason":"NodeStatusUnknown","message":"Kubelet stopped posting node status."}]}})",
    std::chrono::steady_clock::now() + std::chrono::seconds(10)));
  // No berthd runs on n3: the object is written, and nothing answers it.
  kube::volume_object_spec spec;
  spec.csi_name = "cl-on-gone-node";
  spec.node = "n3";
  spec.size_bytes = 64 * mib;
  spec.parameters["backend"] = "block";
  spec.access_type = "mount";
  ASSERT_TRUE(api().create_object(
    kube::berth_volumes(), kube::volume_object_json(kube::object_name_for(spec.csi_name), spec),
    std::chrono::steady_clock::now() + std::chrono::seconds(10)));
  auto condition = [&] {
    v1::ControllerGetVolumeRequest get;
    get.set_volume_id("cl-on-gone-node");
    v1::ControllerGetVolumeResponse got;
    auto st = controller().ControllerGetVolume(call().get(), get, &got);
    EXPECT_TRUE(st.ok()) << st.error_message();
    return got.status().volume_condition();
  };
  auto listed = [&] {
    v1::ListVolumesResponse all;
    auto st = controller().ListVolumes(call().get(), v1::ListVolumesRequest{}, &all);
    EXPECT_TRUE(st.ok()) << st.error_message();
    for (const auto& e : all.entries()) {
      if (e.volume().volume_id() == "cl-on-gone-node") {
        return e.status().volume_condition();
      }
    }
    return v1::VolumeCondition{};
  };
  EXPECT_TRUE(condition().abnormal());
  EXPECT_NE(condition().message().find("node \"n3\" is not Ready (Unknown since"),
            std::string::npos)
    << condition().message();
  EXPECT_TRUE(listed().abnormal()) << listed().message();
  ASSERT_TRUE(api().delete_object(kube::nodes(), "n3",
                                  std::chrono::steady_clock::now() + std::chrono::seconds(10)));
  EXPECT_NE(condition().message().find("node \"n3\" no longer exists"), std::string::npos)
    << condition().message();
  EXPECT_NE(listed().message().find("no longer exists"), std::string::npos) << listed().message();
  v1::DeleteVolumeRequest del;
  del.set_volume_id("cl-on-gone-node");
  v1::DeleteVolumeResponse deleted;
  auto st = controller().DeleteVolume(call().get(), del, &deleted);
  ASSERT_TRUE(st.ok()) << st.error_message() << logs();
  EXPECT_FALSE(object_of("cl-on-gone-node"));
  kube::list_query q;
  auto events = api().list_objects(kube::events(kube::cluster_events_namespace), q,
                                   std::chrono::steady_clock::now() + std::chrono::seconds(10));
  ASSERT_TRUE(events);
  bool told = false;
  for (const auto& e : events->items) {
    told = told || (e.find("NodeGone") != std::string::npos && e.find("n3") != std::string::npos);
  }
  EXPECT_TRUE(told) << "no NodeGone Event names n3";
}

} // namespace berth::cluster_test
