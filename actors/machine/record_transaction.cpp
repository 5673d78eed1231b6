#include "actors/machine/record_transaction.hpp"

#include <utility>

namespace berth {

record_transaction::next_step record_transaction::out_of_turn(const char* input) {
  phase_ = phase::over;
  return ended{
    ending::failed,
    make_error(ec::internal, std::string{"record transaction: "} + input + " out of turn")};
}

record_transaction::next_step record_transaction::work_failed(caf::error err) {
  if (phase_ != phase::working) {
    return out_of_turn("work_failed");
  }
  phase_ = phase::over;
  return ended{ending::failed, std::move(err)};
}

record_transaction::next_step record_transaction::work_succeeded(
  const committed_record& rec, const std::function<volume_record(const volume_record&)>& after) {
  if (phase_ != phase::working) {
    return out_of_turn("work_succeeded");
  }
  switch (plan_.change) {
    case record_change::none:
      pending_ = rec.shared();
      phase_ = phase::over;
      return ended{ending::committed, {}};
    case record_change::erase:
      pending_ = rec.shared();
      phase_ = phase::storing;
      return erase{pending_->name};
    case record_change::save:
    case record_change::save_if_changed: break;
  }
  pending_ = std::make_shared<const volume_record>(after(*rec));
  if (plan_.change == record_change::save_if_changed && *pending_ == *rec) {
    phase_ = phase::over;
    return ended{ending::committed, {}};
  }
  phase_ = phase::storing;
  return save{pending_};
}

record_transaction::next_step record_transaction::persisted(const caf::error& err,
                                                            committed_record& rec) {
  if (phase_ != phase::storing) {
    return out_of_turn("persisted");
  }
  if (err) {
    if (plan_.undoable) {
      store_error_ = err;
      phase_ = phase::undoing;
      return undo{std::cref(*pending_)};
    }
    phase_ = phase::over;
    return ended{ending::unsaved, err};
  }
  if (plan_.change == record_change::erase) {
    rec.forget();
  } else {
    rec.commit(pending_, plan_.creates);
  }
  phase_ = phase::over;
  return ended{ending::committed, {}};
}

record_transaction::next_step record_transaction::undone() {
  if (phase_ != phase::undoing) {
    return out_of_turn("undone");
  }
  phase_ = phase::over;
  return ended{ending::unsaved, std::move(store_error_)};
}

} // namespace berth
