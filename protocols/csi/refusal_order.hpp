#pragma once

// The order in which every CSI RPC refuses a request, written once
// (docs/csi-errors.md, "The order of refusals"):
//
//   1. a required field is missing                          -> INVALID_ARGUMENT
//   2. the volume the request names does not exist          -> NOT_FOUND
//   3. a path where the volume must be is not where it is   -> NOT_FOUND
//      (relative, malformed, or well formed but elsewhere)
//   4. only then the request's content: a capability, a key, -> the code of that check
//      a range, a path outside the kubelet directory
//
// judge() decides what it can from the request alone: a missing field, an id no
// volume can have, a path that cannot be where any volume is. The rest needs the
// volume's record: whether a well-formed id names a volume, and whether a
// well-formed path is where it is staged or published. For an admitted request the
// registry and the volume actor answer those with NOT_FOUND; for a request whose
// content is refused, refuse() looks the record up first, so that a content
// refusal is sent only for a volume that exists at the path. Only a refused request
// pays for that lookup.

#include <string>
#include <vector>

#include <grpcpp/support/status.h>

namespace berth::csi {

/// A field the spec marks REQUIRED for the RPC.
struct required_field {
  bool present = false;
  const char* name = "";
};

/// What the order needs to know about one request.
struct request_shape {
  /// Step 1, in the order of the message's fields.
  std::vector<required_field> required;
  /// Step 2: the id of the volume the request acts on; null when it names none
  /// (CreateVolume). `volume_noun` names it in the refusal ("source volume").
  const std::string* volume_id = nullptr;
  const char* volume_noun = "volume";
  /// Step 3: a path the request says the volume is at (NodeGetVolumeStats and
  /// NodeExpandVolume's volume_path); null when it names none. A path that is to
  /// receive the volume (a staging or target path) is content, not this.
  const std::string* located_path = nullptr;
  const char* located_field = "volume_path";
  /// Step 4: the first refusal of the request's content, or OK.
  grpc::Status content = grpc::Status::OK;
};

/// What the RPC does next.
struct verdict {
  enum class step {
    admit,                   ///< send the RPC's message; the actors decide the rest
    refuse,                  ///< finish now with `status`
    refuse_if_volume_exists, ///< `status` if *volume_id names a volume, else NOT_FOUND
  };
  step next = step::admit;
  grpc::Status status = grpc::Status::OK;
};

/// The order above, applied to `shape`.
verdict judge(const request_shape& shape);

/// NOT_FOUND for `id`: "<noun> "<id>" does not exist".
grpc::Status unknown_volume(const std::string& id, const char* noun = "volume");

} // namespace berth::csi
