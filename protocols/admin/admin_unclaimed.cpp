// The admin API's routes of the cluster mode's unclaimed volumes and snapshots
// (core/unclaimed_desk.hpp): GET /v1/unclaimed and DELETE /v1/unclaimed/NAME, answered by
// the node agent.

#include "protocols/admin/admin_api.hpp"

#include "core/errors.hpp"
#include "core/json_text.hpp"
#include "core/text.hpp"

namespace berth {

namespace {

caf::error not_in_cluster_mode() {
  return make_error(ec::failed_precondition,
                    "berthd runs without --kubernetes: its own Controller service owns every "
                    "CSI volume here, so none is unclaimed (DeleteVolume removes one)");
}

} // namespace

void admin_api::unclaimed(responder r) {
  if (!unclaimed_) {
    r.fail(not_in_cluster_mode());
    return;
  }
  auto now = unclaimed_->unclaimed();
  if (!now) {
    r.fail(now.error());
    return;
  }
  auto list = [](const std::vector<std::string>& names) {
    std::string out = "[";
    for (size_t i = 0; i < names.size(); ++i) {
      out += (i ? "," : "") + json_quote(names[i]);
    }
    return out + "]";
  };
  r.ok("{\"listed_at\":" + json_quote(rfc3339(now->listed_at)) + ",\"unclaimed\":"
       + list(now->names) + ",\"unclaimed_snapshots\":" + list(now->snapshots) + "}");
}

void admin_api::remove_unclaimed(std::string name, responder r) {
  if (!unclaimed_) {
    r.fail(not_in_cluster_mode());
    return;
  }
  unclaimed_->remove_unclaimed(name, [r, name](caf::error err) {
    if (err) {
      r.fail(err);
      return;
    }
    r.ok("{\"removed\":" + json_quote(name) + "}");
  });
}

} // namespace berth
