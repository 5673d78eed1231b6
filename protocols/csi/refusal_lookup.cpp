// refuse() and answer_if_volume_exists() (csi_services.hpp): the refusal order of
// refusal_order.hpp applied by a service, with the lookup of the volume that a content
// refusal waits for.

#include "actors/csi_rules.hpp"
#include "backends/node_path.hpp"
#include "core/text.hpp"
#include "protocols/csi/csi_services.hpp"
#include "protocols/csi/refusal_order.hpp"

namespace berth::csi {

namespace {

/// Finishes `r` with `answer` once a lookup finds that `id` names a CSI volume, and, when
/// `path` is not empty, that the volume is staged or published at `path` (step 3 before
/// step 4); with NOT_FOUND otherwise.
grpc::ServerUnaryReactor* answer_after_lookup(gateway& gw, const registry_actor& registry,
                                              counted_reactor* r, const std::string& id,
                                              const char* noun, std::string path,
                                              grpc::Status answer) {
  gw.ask(
    registry, query_timeout,
    [r, answer, id, noun, path](volume_record& rec) {
      if (rec.kind != record_kind::volume) {
        r->Finish(unknown_volume(id, noun));
      } else if (auto err = path.empty() ? caf::error{} : check_volume_path(rec, path)) {
        r->fail(err);
      } else {
        r->Finish(answer);
      }
    },
    on_error(r), atom::get_v, id, record_owner::csi);
  return r;
}

} // namespace

grpc::ServerUnaryReactor* answer_if_volume_exists(gateway& gw, const registry_actor& registry,
                                                  counted_reactor* r, const std::string& id,
                                                  grpc::Status answer, const char* noun) {
  return answer_after_lookup(gw, registry, r, id, noun, {}, std::move(answer));
}

grpc::ServerUnaryReactor* refuse(gateway& gw, const registry_actor& registry,
                                 counted_reactor* r, const request_shape& shape) {
  auto v = judge(shape);
  switch (v.next) {
    case verdict::step::admit:
      return nullptr;
    case verdict::step::refuse:
      return finish_now(r, v.status);
    case verdict::step::refuse_if_volume_exists:
      break;
  }
  auto path = shape.located_path == nullptr ? std::string{}
                                            : canonical_node_path(*shape.located_path);
  return answer_after_lookup(gw, registry, r, *shape.volume_id, shape.volume_noun,
                             std::move(path), v.status);
}

} // namespace berth::csi
