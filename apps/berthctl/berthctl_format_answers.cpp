// What berthctl prints for berthd's answers to release and unclaimed, the operator's
// clean-up verbs (declared in berthctl_cli.hpp).

#include "apps/berthctl/berthctl_cli.hpp"

#include <rapidjson/document.h>

#include "core/errors.hpp"
#include "core/text.hpp"

namespace berth::cli {

caf::expected<std::string> format_release(const std::string& body) {
  rapidjson::Document doc;
  doc.Parse(body.c_str(), body.size());
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("volume")
      || !doc["volume"].IsString() || !doc.HasMember("id") || !doc["id"].IsString()
      || !doc.HasMember("dropped") || !doc["dropped"].IsUint()) {
    return make_error(ec::internal, "an unreadable answer to release: " + body.substr(0, 200));
  }
  std::string out = "released mount ID " + short_id(doc["id"].GetString()) + " of volume "
    + doc["volume"].GetString() + " (count " + std::to_string(doc["dropped"].GetUint())
    + " dropped)\n";
  auto checked = doc.FindMember("checked");
  if (checked != doc.MemberEnd() && checked->value.IsBool() && !checked->value.GetBool()) {
    auto why = doc.FindMember("unchecked_why");
    out += std::string{"(not checked against dockerd: "}
      + (why != doc.MemberEnd() && why->value.IsString() ? why->value.GetString()
                                                         : "berthd did not say why")
      + ")\n";
  }
  return out;
}

caf::expected<std::string> format_unclaimed(const std::string& body) {
  rapidjson::Document doc;
  doc.Parse(body.c_str(), body.size());
  auto unreadable = [&] {
    return make_error(ec::internal, "an unreadable answer to unclaimed: " + body.substr(0, 200));
  };
  if (doc.HasParseError() || !doc.IsObject() || !doc.HasMember("unclaimed")
      || !doc["unclaimed"].IsArray() || !doc.HasMember("listed_at")
      || !doc["listed_at"].IsString()) {
    return unreadable();
  }
  // An older berthd answers without unclaimed_snapshots.
  static const rapidjson::Value no_snapshots{rapidjson::kArrayType};
  const auto* snapshots = &no_snapshots;
  if (doc.HasMember("unclaimed_snapshots")) {
    if (!doc["unclaimed_snapshots"].IsArray()) {
      return unreadable();
    }
    snapshots = &doc["unclaimed_snapshots"];
  }
  const auto& names = doc["unclaimed"].GetArray();
  std::string as_of =
    std::string{" (as of the node agent's LIST at "} + doc["listed_at"].GetString() + ")";
  if (names.Empty() && snapshots->Empty()) {
    return "no unclaimed CSI volumes or snapshots" + as_of + "\n";
  }
  std::string out;
  auto block = [&](const rapidjson::Value& list, const char* what) {
    if (list.Empty()) {
      return true;
    }
    out += std::to_string(list.Size()) + what + as_of + ":\n";
    for (const auto& name : list.GetArray()) {
      if (!name.IsString()) {
        return false;
      }
      out += std::string{"  "} + name.GetString() + "\n";
    }
    return true;
  };
  if (!block(doc["unclaimed"], " CSI volume(s) recorded here that no BerthVolume names")
      || !block(*snapshots, " CSI snapshot(s) recorded here that no BerthSnapshot names")) {
    return unreadable();
  }
  return out + "berthd keeps them; berthctl unclaimed rm NAME removes one, with its storage\n";
}

} // namespace berth::cli
