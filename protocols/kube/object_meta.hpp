#pragma once

// The metadata berth reads of each of its own objects (BerthVolume, BerthSnapshot).

#include <cstdint>
#include <string>
#include <vector>

namespace berth::kube {

struct object_meta {
  std::string name; ///< metadata.name (object_name_for the CSI name)
  std::string uid;  ///< metadata.uid: tells a new object from an old one of the same name
  std::string resource_version;
  int64_t generation = 0;
  bool deleting = false;      ///< metadata.deletionTimestamp is set
  std::string delete_request; ///< metadata.annotations[delete_request_annotation]
  std::vector<std::string> finalizers;
};

} // namespace berth::kube
