#include "actors/volume.hpp"

// The behaviour of one volume actor: each request becomes a queued step that the
// engine (volume_engine.cpp) starts when the previous one ended:
//
//   request ─▶ queue ─▶ guards ─▶ transition (volume_docker.cpp, volume_csi.cpp)
//   expand/modify ─▶ coalescing window (volume_mailbox.cpp) ─▶ queue ─▶ one modify
//
// Other volumes never wait for this one.

#include <caf/typed_event_based_actor.hpp>

#include "actors/detail/transitions.hpp"
#include "actors/volume_rules.hpp"
#include "core/text.hpp"

namespace berth {

using namespace detail;

namespace {

void queue_mount(self_ptr self, std::string id, std::string dockerd, caller from,
                 promise<std::string> rp) {
  auto what = "mount (id " + short_id(id) + ")";
  count_change change{id, dockerd};
  enqueue_count_change<std::string>(
    self, std::move(what), std::move(from), std::move(change), std::move(rp),
    [self, id, dockerd](auto rp) { run_mount(self, rp, id, dockerd); },
    [](const volume_record& rec) { return rec.mountpoint; });
}

void queue_unmount(self_ptr self, std::string id, promise<atom::ok> rp) {
  auto what = "unmount (id " + short_id(id) + ")";
  count_change change{id, std::nullopt};
  enqueue_count_change<atom::ok>(
    self, std::move(what), {}, std::move(change), std::move(rp),
    [self, id](auto rp) { run_unmount(self, rp, id); },
    [](const volume_record&) { return atom::ok_v; });
}

void queue_publish(self_ptr self, publish_request req, promise<atom::ok> rp) {
  auto what = "publish at " + req.target;
  auto from = req.from;
  path_change change{req.target, req};
  enqueue_path_change(self, std::move(what), std::move(from), std::move(change), std::move(rp),
                      [self, req = std::move(req)](auto rp) { run_publish(self, rp, req); });
}

void queue_unpublish(self_ptr self, std::string target, promise<atom::ok> rp) {
  auto what = "unpublish of " + target;
  path_change change{target, std::nullopt};
  enqueue_path_change(self, std::move(what), {}, std::move(change), std::move(rp),
                      [self, target](auto rp) { run_unpublish(self, rp, target); });
}

void queue_stage(self_ptr self, stage_request req, promise<atom::ok> rp) {
  auto what = "stage at " + req.staging_path;
  auto from = req.from;
  enqueue_answering<atom::ok>(self, std::move(what), admits::existing, record_owner::csi,
                              std::move(from), std::move(rp),
                              [self, req = std::move(req)](auto rp) { run_stage(self, rp, req); });
}

void queue_unstage(self_ptr self, std::string path, promise<atom::ok> rp) {
  auto what = "unstage of " + path;
  enqueue_answering<atom::ok>(self, std::move(what), admits::existing, record_owner::csi, {},
                              std::move(rp),
                              [self, path](auto rp) { run_unstage(self, rp, path); });
}

void queue_grow(self_ptr self, std::string path, promise<uint64_t> rp) {
  auto what = "grow at " + path;
  enqueue_answering<uint64_t>(self, std::move(what), admits::existing, record_owner::csi, {},
                              std::move(rp), [self, path](auto rp) { run_grow(self, rp, path); });
}

void queue_stats(self_ptr self, std::string path, promise<volume_stats> rp) {
  auto what = "stats at " + path;
  enqueue_answering<volume_stats>(self, std::move(what), admits::existing, record_owner::csi, {},
                                  std::move(rp),
                                  [self, path](auto rp) { run_stats(self, rp, path); });
}

} // namespace

volume_actor::behavior_type volume(volume_actor::stateful_pointer<volume_state> self,
                                   volume_env env, std::shared_ptr<const volume_record> rec,
                                   bool exists) {
  self->state.env = std::move(env);
  self->state.clock = &self->clock();
  auto& stats = self->state.env.stats;
  if (!stats) {
    // Only a test leaves it out; counting into a private one keeps every use safe.
    stats = std::make_shared<telemetry>(std::vector<std::string>{self->state.env.storage->name()});
  }
  // Loaded from state, it agrees with the host before it serves anything.
  bool reconciles_first = exists && self->state.env.reconcile_with;
  self->state.machine =
    volume_machine{committed_record{std::move(rec), exists, stats->volumes,
                                    self->state.env.directory.get(), self->state.env.counted},
                   self->state.env.backend_timeout, reconciles_first};
  if (reconciles_first) {
    stats->volumes.reconcile_pending.add(1);
    enqueue_internal(self, "reconcile", [self] {
      auto seen = std::move(self->state.env.reconcile_with); // only the first uses it
      run_reconcile(self, std::move(seen));
    });
  }
  return {
    // -- Docker ------------------------------------------------------------------
    [self](atom::create, option_map& options, uint64_t source_bytes) -> caf::result<atom::ok> {
      return enqueue_request<atom::ok>(self, "create", admits::creation, record_owner::docker, {},
                                       [self, options = std::move(options),
                                        source_bytes](auto rp) {
                                         run_create(self, rp, options, source_bytes);
                                       });
    },
    [self](atom::create, option_map& options, uint64_t source_bytes,
           std::string& tree) -> caf::result<atom::ok> {
      return enqueue_request<atom::ok>(self, "import", admits::creation, record_owner::docker, {},
                                       [self, options = std::move(options), source_bytes,
                                        tree = std::move(tree)](auto rp) {
                                         run_create(self, rp, options, source_bytes, tree);
                                       });
    },
    [self](atom::export_open, std::string& id, export_form form) -> caf::result<export_view> {
      return enqueue_request<export_view>(
        self, "export " + id, admits::existing, record_owner::docker, {},
        [self, id, form](auto rp) { run_export_open(self, rp, id, form); });
    },
    [self](atom::export_close, std::string& id) -> caf::result<atom::ok> {
      return enqueue_request<atom::ok>(self, "end of export " + id, admits::existing,
                                       record_owner::docker, {}, [self, id](auto rp) {
                                         run_export_close(self, rp, id);
                                       });
    },
    [self](atom::import_delta, std::string& delta, volume_record& base) -> caf::result<atom::ok> {
      return enqueue_request<atom::ok>(self, "import of a delta", admits::existing,
                                       record_owner::docker, {},
                                       [self, delta = std::move(delta), base = std::move(base)](
                                         auto rp) { run_import_delta(self, rp, delta, base); });
    },
    [self](atom::mount, std::string& id, std::string& dockerd, caller& from) {
      return to_sender<std::string>(self, [&](auto rp) {
        queue_mount(self, std::move(id), std::move(dockerd), std::move(from), rp);
      });
    },
    [self](atom::mount, std::string& id, std::string& dockerd, caller& from,
           direct_reply<std::string>& reply) {
      queue_mount(self, std::move(id), std::move(dockerd), std::move(from), std::move(reply));
    },
    [self](atom::unmount, std::string& id) {
      return to_sender<atom::ok>(self, [&](auto rp) { queue_unmount(self, std::move(id), rp); });
    },
    [self](atom::unmount, std::string& id, direct_reply<atom::ok>& reply) {
      queue_unmount(self, std::move(id), std::move(reply));
    },
    [self](atom::release, mount_release& r) -> caf::result<uint32_t> {
      // No caller: like an Unmount, a release runs even when its client left.
      return enqueue_request<uint32_t>(self, "release of mount ID " + short_id(r.id),
                                       admits::existing, record_owner::docker, {},
                                       [self, r = std::move(r)](auto rp) {
                                         run_release(self, rp, r);
                                       });
    },
    [self](atom::remove, record_owner owner, record_kind kind) -> caf::result<atom::ok> {
      return enqueue_request<atom::ok>(self, "remove", admits::existing, owner, {},
                                       [self, kind](auto rp) { run_remove(self, rp, kind); });
    },
    // -- CSI ---------------------------------------------------------------------
    [self](atom::create, volume_spec& spec) -> caf::result<volume_record> {
      auto from = spec.from;
      auto owner = spec.owner;
      return enqueue_request<volume_record>(self, "create", admits::creation, owner,
                                            std::move(from),
                                            [self, spec = std::move(spec)](auto rp) {
                                              run_csi_create(self, rp, spec);
                                            });
    },
    [self](atom::stage, stage_request& req) {
      return to_sender<atom::ok>(self, [&](auto rp) { queue_stage(self, std::move(req), rp); });
    },
    [self](atom::stage, stage_request& req, direct_reply<atom::ok>& reply) {
      queue_stage(self, std::move(req), std::move(reply));
    },
    [self](atom::unstage, std::string& path) {
      return to_sender<atom::ok>(self, [&](auto rp) { queue_unstage(self, std::move(path), rp); });
    },
    [self](atom::unstage, std::string& path, direct_reply<atom::ok>& reply) {
      queue_unstage(self, std::move(path), std::move(reply));
    },
    [self](atom::publish, publish_request& req) {
      return to_sender<atom::ok>(self, [&](auto rp) { queue_publish(self, std::move(req), rp); });
    },
    [self](atom::publish, publish_request& req, direct_reply<atom::ok>& reply) {
      queue_publish(self, std::move(req), std::move(reply));
    },
    [self](atom::unpublish, std::string& target) {
      return to_sender<atom::ok>(self,
                                 [&](auto rp) { queue_unpublish(self, std::move(target), rp); });
    },
    [self](atom::unpublish, std::string& target, direct_reply<atom::ok>& reply) {
      queue_unpublish(self, std::move(target), std::move(reply));
    },
    // -- the coalescing mailbox ---------------------------------------------------
    [self](atom::modify, modify_request& req) -> caf::result<volume_record> {
      auto rp = self->make_response_promise<volume_record>();
      receive_modify(self, rp, std::move(req));
      return rp;
    },
    [self](atom::close_window, uint64_t number) { close_window(self, number); },
    [self](atom::grow, std::string& path) {
      return to_sender<uint64_t>(self, [&](auto rp) { queue_grow(self, std::move(path), rp); });
    },
    [self](atom::grow, std::string& path, direct_reply<uint64_t>& reply) {
      queue_grow(self, std::move(path), std::move(reply));
    },
    [self](atom::stats, std::string& path) {
      return to_sender<volume_stats>(self,
                                     [&](auto rp) { queue_stats(self, std::move(path), rp); });
    },
    [self](atom::stats, std::string& path, direct_reply<volume_stats>& reply) {
      queue_stats(self, std::move(path), std::move(reply));
    },
    // -- reading -----------------------------------------------------------------
    [self](atom::get) -> caf::result<volume_record> {
      if (!self->state.rec().exists()) {
        return no_such_volume(self->state.rec()->name);
      }
      return *self->state.rec();
    },
    [self](atom::get, record_owner owner) -> caf::result<volume_record> {
      if (!self->state.rec().exists()) {
        return no_such_volume(self->state.rec()->name);
      }
      if (auto err = check_owner(*self->state.rec(), owner, false)) {
        return err;
      }
      return *self->state.rec();
    },
    // -- internal ----------------------------------------------------------------
    [self](atom::drain) -> caf::result<atom::ok> {
      auto rp = self->make_response_promise<atom::ok>();
      when_idle(self, rp);
      return rp;
    },
    [self](atom::settled) -> caf::result<atom::ok> {
      auto rp = self->make_response_promise<atom::ok>();
      when_settled(self, rp);
      return rp;
    },
    [self](atom::done, uint64_t token, caf::error& err) {
      on_call_done(self, token, std::move(err));
    },
    [self](atom::deadline) { on_call_deadline(self); },
    [self](atom::retire) { retire(self); },
  };
}

} // namespace berth
