#include "apps/prestop/local_volumes.hpp"

#include "core/errors.hpp"
#include "core/record_json.hpp"
#include "protocols/http/unix_http_client.hpp"

namespace berth::drain {

std::string busy_volume::describe() const {
  std::string out = name + " (";
  if (staged) {
    out += "staged";
  }
  if (targets > 0) {
    out += std::string{staged ? ", " : ""} + std::to_string(targets)
           + (targets == 1 ? " target" : " targets");
  }
  return out + ")";
}

caf::expected<std::vector<busy_volume>> busy_volumes(unix_http_client& admin) {
  auto res = admin.get("/v1/volumes");
  if (!res) {
    return res.error();
  }
  if (res->status != 200) {
    return make_error(ec::unavailable, "berthd's admin API answered HTTP "
                                         + std::to_string(res->status) + " to GET /v1/volumes: "
                                         + res->body.substr(0, 200));
  }
  auto recs = records_from_json(res->body);
  if (!recs) {
    return make_error(ec::internal, "berthd's admin API sent an unreadable volume list: "
                                      + berth::describe(recs.error()));
  }
  std::vector<busy_volume> out;
  for (const auto& rec : *recs) {
    if (!rec.staging_path.empty() || !rec.published.empty()) {
      out.push_back({rec.name, !rec.staging_path.empty(), rec.published.size()});
    }
  }
  return out; // the admin API sorts by name
}

} // namespace berth::drain
