#include "protocols/gateway/gateway.hpp"

#include <caf/actor_cast.hpp>
#include <caf/event_based_actor.hpp>

namespace berth {

namespace {

caf::behavior gateway_actor(caf::event_based_actor* self, int /* unused: see below */) {
  return {
    [self](gateway_job& job) {
      try {
        job(self);
      } catch (const std::exception& e) {
        spdlog::error("gateway job failed: {}", e.what());
      }
    },
  };
}

} // namespace

gateway::gateway(caf::actor_system& sys)
  // An argument is passed because CAF 0.17 dereferences a null argument tuple when
  // a function actor is spawned without arguments (UBSan reports it).
  : actor_(sys.spawn(gateway_actor, 0)) {
}

gateway::~gateway() {
  caf::anon_send_exit(actor_, caf::exit_reason::user_shutdown);
}

} // namespace berth
