// CreateVolume's mutable_parameters in the CSI rules: the record keeps them, and a
// retried CreateVolume whose mutable parameters differ is still the same volume.

#include "actors/csi_rules.hpp"

#include <gtest/gtest.h>

#include "core/errors.hpp"

using namespace berth;

namespace {

volume_spec spec_with(option_map mutable_params) {
  volume_spec spec;
  spec.kind = record_kind::volume;
  spec.backend = "block";
  spec.parameters = {{"fsType", "ext4"}};
  spec.required_bytes = 1 << 20;
  spec.mutable_parameters = std::move(mutable_params);
  return spec;
}

} // namespace

TEST(csi_rules_mutable, the_record_keeps_the_specs_mutable_parameters) {
  auto rec = make_csi_record("pvc-1", spec_with({{"readAheadKB", "256"}}), 1 << 20);
  EXPECT_EQ(rec.mutable_parameters, (option_map{{"readAheadKB", "256"}}));
  EXPECT_EQ(rec.options, (option_map{{"fsType", "ext4"}})) << "kept apart from the parameters";
  EXPECT_EQ(rec.modifications, 0u) << "creating is no modification";
}

// The spec lists what makes a CreateVolume retry incompatible (capacity_range,
// volume_capabilities, parameters, accessibility_requirements, volume_content_source);
// mutable_parameters are not among them: they change over the volume's life.
TEST(csi_rules_mutable, a_recreate_with_other_mutable_parameters_is_compatible) {
  auto rec = make_csi_record("pvc-1", spec_with({{"readAheadKB", "256"}}), 1 << 20);
  EXPECT_FALSE(check_csi_recreate(rec, spec_with({{"readAheadKB", "256"}})));
  auto err = check_csi_recreate(rec, spec_with({{"readAheadKB", "1024"}}));
  EXPECT_FALSE(err) << describe(err);
  err = check_csi_recreate(rec, spec_with({}));
  EXPECT_FALSE(err) << describe(err);
  // The parameters still decide.
  auto other = spec_with({{"readAheadKB", "256"}});
  other.parameters = {{"fsType", "xfs"}};
  EXPECT_TRUE(check_csi_recreate(rec, other));
}
