// CSI Identity service: GetPluginInfo, GetPluginCapabilities, Probe.

#include "tests/csi/csi_fixture.hpp"

namespace berth::csi_test {
namespace {

using IdentityTest = csi_fixture;

TEST_F(IdentityTest, GetPluginInfoNamesBerthWithAVersion) {
  v1::GetPluginInfoResponse resp;
  ASSERT_RPC(OK, call(&Ident::GetPluginInfo, v1::GetPluginInfoRequest{}, resp));
  EXPECT_EQ(resp.name(), "berth.csi.dev");
  EXPECT_FALSE(resp.vendor_version().empty()) << resp.ShortDebugString();
}

TEST_F(IdentityTest, GetPluginCapabilitiesListsControllerTopologyAndOnlineExpansion) {
  v1::GetPluginCapabilitiesResponse resp;
  ASSERT_RPC(OK, call(&Ident::GetPluginCapabilities, v1::GetPluginCapabilitiesRequest{}, resp));
  bool controller = false;
  bool topology = false;
  bool online = false;
  for (auto& cap : resp.capabilities()) {
    if (cap.has_service()) {
      controller |= cap.service().type() == v1::PluginCapability::Service::CONTROLLER_SERVICE;
      topology |= cap.service().type()
                  == v1::PluginCapability::Service::VOLUME_ACCESSIBILITY_CONSTRAINTS;
    }
    if (cap.has_volume_expansion()) {
      online |= cap.volume_expansion().type() == v1::PluginCapability::VolumeExpansion::ONLINE;
    }
  }
  EXPECT_TRUE(controller) << resp.ShortDebugString();
  EXPECT_TRUE(topology) << resp.ShortDebugString();
  EXPECT_TRUE(online) << resp.ShortDebugString();
}

TEST_F(IdentityTest, ProbeAnswersReady) {
  v1::ProbeResponse resp;
  ASSERT_RPC(OK, call(&Ident::Probe, v1::ProbeRequest{}, resp));
  // `ready` unset means ready (spec); when set it must say so once started.
  if (resp.has_ready()) {
    EXPECT_TRUE(resp.ready().value());
  }
}

} // namespace
} // namespace berth::csi_test
