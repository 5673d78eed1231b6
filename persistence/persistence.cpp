#include "persistence/persistence.hpp"

// Group commit: put/erase join `batch`; the first one schedules a `commit` message
// behind everything already in the mailbox. The commit writes the whole batch with one
// fsync; requests that arrive while it blocks form the next batch.

#include <caf/typed_event_based_actor.hpp>
#include <spdlog/spdlog.h>

#include "core/errors.hpp"
#include "persistence/journal_format.hpp"

namespace berth {

namespace {

using self_ptr = persistence_actor::stateful_pointer<persistence_state>;

caf::response_promise enqueue(self_ptr self, journal_entry entry) {
  auto& st = self->state;
  st.batch.push_back(std::move(entry));
  auto rp = self->make_response_promise();
  st.waiting.push_back(rp);
  if (!st.commit_scheduled) {
    st.commit_scheduled = true;
    self->send(caf::actor_cast<persistence_actor>(self), atom::commit_v);
  }
  return rp;
}

void maybe_compact(self_ptr self) {
  auto& st = self->state;
  if (st.st->journal_bytes() <= st.cfg.compact_after_bytes) {
    return;
  }
  if (auto err = st.st->compact(st.state)) {
    // Not fatal: the journal still holds everything; try again after the next commit.
    spdlog::error("compaction failed: {}", describe(err));
  } else {
    spdlog::info("state compacted ({} volume(s))", st.state.volumes.size());
  }
}

void commit(self_ptr self) {
  auto& st = self->state;
  st.commit_scheduled = false;
  if (!st.batch.empty()) {
    caf::error err;
    try {
      err = st.st->append(st.batch);
    } catch (const std::exception& e) {
      err = make_error(ec::internal, std::string{"journal append threw: "} + e.what());
    }
    if (err) {
      spdlog::error("{} state change(s) not saved: {}", st.batch.size(), describe(err));
      for (auto& rp : st.waiting) {
        rp.deliver(err);
      }
    } else {
      for (const auto& entry : st.batch) {
        detail::apply_entry(st.state, entry);
      }
      for (auto& rp : st.waiting) {
        rp.deliver(atom::ok_v);
      }
    }
    st.batch.clear();
    st.waiting.clear();
    if (!err) {
      maybe_compact(self);
    }
  }
  for (auto& rp : st.flush_waiters) {
    rp.deliver(atom::ok_v);
  }
  st.flush_waiters.clear();
}

} // namespace

persistence_actor::behavior_type
persistence(persistence_actor::stateful_pointer<persistence_state> self,
            std::shared_ptr<store> st, state_snapshot initial, persistence_config cfg) {
  self->state.st = std::move(st);
  self->state.state = std::move(initial);
  self->state.cfg = cfg;
  return {
    [self](atom::put, volume_record& rec) -> caf::result<atom::ok> {
      return enqueue(self, journal_entry{false, std::move(rec)});
    },
    [self](atom::erase, std::string& name) -> caf::result<atom::ok> {
      journal_entry entry;
      entry.erase = true;
      entry.record.name = std::move(name);
      return enqueue(self, std::move(entry));
    },
    [self](atom::flush) -> caf::result<atom::ok> {
      auto& st = self->state;
      if (st.batch.empty() && !st.commit_scheduled) {
        return atom::ok_v;
      }
      auto rp = self->make_response_promise();
      st.flush_waiters.push_back(rp);
      return rp;
    },
    [self](atom::commit) { commit(self); },
  };
}

persistence_actor spawn_persistence(caf::actor_system& sys, std::shared_ptr<store> st,
                                    state_snapshot initial, persistence_config cfg) {
  return sys.spawn<caf::detached>(persistence, std::move(st), std::move(initial), cfg);
}

} // namespace berth
