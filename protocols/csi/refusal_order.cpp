#include "protocols/csi/refusal_order.hpp"

// judge(), the order itself: pure, in the codec's library (its fuzz target links no
// actors). refuse(), which looks a volume up when the order needs it, is in
// refusal_lookup.cpp with the services.

#include "core/text.hpp"
#include "protocols/csi/csi_codec.hpp"
#include "protocols/csi/status.hpp"

namespace berth::csi {

grpc::Status unknown_volume(const std::string& id, const char* noun) {
  return not_found(std::string{noun} + " " + quote_input(id) + " does not exist");
}

verdict judge(const request_shape& shape) {
  using step = verdict::step;
  for (const auto& field : shape.required) {
    if (!field.present) {
      return {step::refuse, invalid_argument(std::string{field.name} + " is required")};
    }
  }
  if (shape.volume_id != nullptr && !may_exist(*shape.volume_id)) {
    return {step::refuse, unknown_volume(*shape.volume_id, shape.volume_noun)};
  }
  if (shape.located_path != nullptr) {
    // A path that is not absolute and normalized cannot be where a volume was
    // staged or published: NOT_FOUND, whether or not the volume exists.
    if (auto st = check_path(*shape.located_path, shape.located_field); !st.ok()) {
      return {step::refuse, not_found(shape.volume_id == nullptr
                                        ? st.error_message()
                                        : st.error_message() + ", so " + shape.volume_noun + " "
                                            + quote_input(*shape.volume_id) + " is not there")};
    }
  }
  if (!shape.content.ok()) {
    return {shape.volume_id == nullptr ? step::refuse : step::refuse_if_volume_exists,
            shape.content};
  }
  return {};
}

} // namespace berth::csi
