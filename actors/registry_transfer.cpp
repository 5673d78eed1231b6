// The registry's part of berthctl export: the volume's copy for an export is asked of its
// actor, and the volume counts as being copied until the export is closed, so a Remove
// cannot take it from under the copy or the read.

#include <caf/typed_event_based_actor.hpp>

#include "actors/detail/registry_ops.hpp"
#include "actors/volume_rules.hpp"

namespace berth::registry_detail {

caf::result<export_view> open_export(self_ptr self, const std::string& name, std::string id,
                                     export_form form) {
  auto entry = find(self, name);
  if (entry == nullptr) {
    return no_such_volume(name);
  }
  ++self->state.copying[name];
  auto rp = self->make_response_promise<export_view>();
  self->request(entry->hdl, caf::infinite, atom::export_open_v, std::move(id), form)
    .then([rp](export_view& view) mutable { rp.deliver(std::move(view)); },
          [self, name, rp](caf::error& err) mutable {
            end_copy(self, name); // no copy was made: nothing to close
            rp.deliver(std::move(err));
          });
  return rp;
}

caf::result<atom::ok> close_export(self_ptr self, const std::string& name, std::string id) {
  auto entry = find(self, name);
  if (entry == nullptr) {
    return no_such_volume(name);
  }
  auto rp = self->make_response_promise<atom::ok>();
  self->request(entry->hdl, caf::infinite, atom::export_close_v, std::move(id))
    .then(
      [self, name, rp](atom::ok) mutable {
        end_copy(self, name);
        rp.deliver(atom::ok_v);
      },
      [self, name, rp](caf::error& err) mutable {
        // The copy stays until the next start deletes it; the volume is free again.
        end_copy(self, name);
        rp.deliver(std::move(err));
      });
  return rp;
}

} // namespace berth::registry_detail
