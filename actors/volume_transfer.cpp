// The export transitions of one Docker volume: a copy made for an export, read by the
// admin API's transfer, and dropped when it is done. They run in the volume's queue like
// its other transitions, and change no record: the copy is nobody's but the export's. And
// the import of a delta onto the volume, which changes its image's bytes but not its record.

#include "actors/detail/transitions.hpp"
#include "actors/volume_rules.hpp"

namespace berth::detail {

void run_export_open(self_ptr self, promise<export_view> rp, const std::string& id,
                     export_form form) {
  auto rec = *self->state.rec();
  if (rec.kind != record_kind::volume) {
    answer(self, rp, no_such_volume(rec.name, "it is a snapshot; export its volume, or a "
                                              "volume made from it"));
    return;
  }
  transition<export_view> t;
  t.what = "export " + id;
  t.work = on_backend(backend_call::export_copy, [rec, id, form](backend& b) {
    return form == export_form::image ? b.open_export_image(rec, id) : b.open_export(rec, id);
  });
  t.change = record_change::none; // the copy is the export's, not the volume's
  t.failed = "copying for the export failed";
  t.committed = [id](const volume_record& rec, const export_view& view) {
    return "volume " + rec.name + " copied for export " + id + " ("
           + (view.consistency.empty() ? std::string{"consistent"} : view.consistency) + ")";
  };
  transact(self, rp, std::move(t), [](const export_view& view, const volume_record&) {
    return view;
  });
}

void run_export_close(self_ptr self, promise<atom::ok> rp, std::string id) {
  auto rec = *self->state.rec();
  transition<none> t;
  t.what = "end of export " + id;
  t.work = on_backend(backend_call::export_copy,
                      [rec, id](backend& b) { return b.close_export(rec, id); });
  t.change = record_change::none;
  t.failed = "deleting the export's copy failed (the next start deletes it)";
  t.committed = [id](const volume_record& rec, none) {
    return "volume " + rec.name + ": the copy for export " + id + " is deleted";
  };
  transact(self, rp, std::move(t), reply_ok);
}

void run_import_delta(self_ptr self, promise<atom::ok> rp, const std::string& delta,
                      const volume_record& base) {
  auto rec = *self->state.rec();
  if (rec.kind != record_kind::volume) {
    const auto why = "it is a snapshot; a delta applies to a volume made from one";
    answer(self, rp, no_such_volume(rec.name, why));
    return;
  }
  // The image is rewritten whole: no Mount may see it meanwhile, and none may be counted.
  if (auto busy = check_remove(rec)) {
    const auto why = describe(busy) + "; a delta applies only to a volume nothing mounts";
    answer(self, rp, make_error(ec::in_use, why));
    return;
  }
  transition<none> t;
  t.what = "import of a delta since " + base.name;
  t.work = on_backend(backend_call::import_delta,
                      [rec, base, delta](backend& b) { return b.apply_delta(rec, base, delta); });
  t.change = record_change::none; // the bytes in the image change, the record does not
  t.failed = "applying the delta failed; the volume is as it was";
  t.committed = [base](const volume_record& rec, none) {
    return "volume " + rec.name + " holds the delta since snapshot " + base.name;
  };
  transact(self, rp, std::move(t), reply_ok);
}

} // namespace berth::detail
