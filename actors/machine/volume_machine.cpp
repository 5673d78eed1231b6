#include "actors/machine/volume_machine.hpp"

#include "actors/volume_rules.hpp"

namespace berth {

// -- guards ---------------------------------------------------------------------------

caf::error volume_machine::state_refusal(record_owner owner, bool creates, const std::string& what,
                                         clock::time_point now) const {
  if (!creates && !rec_.exists()) {
    return no_such_volume(rec_->name);
  }
  if (rec_.exists() && owner != record_owner::unset) {
    // Docker and CSI are separate namespaces: neither acts on the other's records.
    if (auto err = check_owner(*rec_, owner, creates)) {
      return err;
    }
  }
  if (!reconciled_) {
    // Its record may not match the host: nothing is served from it, not even a count.
    return !certain() ? still_hung(what, now)
                      : make_error(ec::aborted,
                                   "volume " + rec_->name
                                     + " is not reconciled with the host yet; "
                                       "retry later");
  }
  return {};
}

caf::error volume_machine::refusal(const queued_step& step, clock::time_point now) const {
  bool creates = step.who == admits::creation;
  if (auto err = state_refusal(step.owner, creates, step.what, now)) {
    return err;
  }
  if (creates && !certain()) {
    // A hung call (a Remove, say) may still change what exists: "already exists" now
    // could be a lie a moment later.
    return still_hung(step.what, now);
  }
  return {};
}

bool volume_machine::refused_beside_hung(const caf::error& err) const {
  return !certain() && err == ec::aborted;
}

// -- turns ----------------------------------------------------------------------------

caf::error volume_machine::finish() {
  if (running_) {
    return make_error(ec::internal,
                      "volume " + rec_->name + ": a step ended while " + running_->words->what
                        + " was still running");
  }
  steps_.finish();
  return {};
}

// -- the running transition -----------------------------------------------------------

std::optional<running_transition> volume_machine::begin(running_transition r) {
  if (running_) {
    return r;
  }
  running_.emplace(std::move(r));
  return std::nullopt;
}

record_transaction::next_step volume_machine::work_done(const caf::error& err) {
  if (err) {
    return running_->tx.work_failed(err);
  }
  return running_->tx.work_succeeded(rec_, running_->apply);
}

record_transaction::next_step volume_machine::stored(const caf::error& err) {
  return running_->tx.persisted(err, rec_);
}

} // namespace berth
