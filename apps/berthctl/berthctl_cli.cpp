#include "apps/berthctl/berthctl_cli.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <ostream>
#include <sstream>
#include <utility>

#include <rapidjson/document.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include "apps/berthctl/berthctl_status.hpp"
#include "apps/berthctl/berthctl_top.hpp"
#include "core/errors.hpp"
#include "core/limits.hpp"
#include "core/record_json.hpp"
#include "core/text.hpp"
#include "protocols/http/unix_http_client.hpp"

namespace berth::cli {

namespace {

/// The message of an error reply: its "error" (admin) or "Err" field, or the body.
std::string error_of(const http_response& res) {
  rapidjson::Document doc;
  doc.Parse(res.body.c_str(), res.body.size());
  if (!doc.HasParseError() && doc.IsObject()) {
    for (const char* key : {"error", "Err"}) {
      auto it = doc.FindMember(key);
      if (it != doc.MemberEnd() && it->value.IsString()) {
        return it->value.GetString();
      }
    }
  }
  return "HTTP " + std::to_string(res.status) + ": " + res.body.substr(0, 200);
}

/// The berth code of an admin API error status (admin_api's http_status_of, reversed
/// where it is one to one).
ec http_error_code(unsigned status) {
  switch (status) {
    case 400: return ec::invalid_argument;
    case 404: return ec::not_found;
    case 409: return ec::failed_precondition;
    case 429: return ec::resource_exhausted;
    case 503: return ec::unavailable;
    case 504: return ec::timeout;
    default: return ec::internal;
  }
}

/// The admin API body of a resize, modify, release or snapshot create.
std::string change_body(const options& opts) {
  rapidjson::StringBuffer buf;
  rapidjson::Writer<rapidjson::StringBuffer> w{buf};
  w.StartObject();
  if (opts.cmd == command::snapshot_create) {
    w.Key("name");
    w.String(opts.snapshot.c_str(), static_cast<rapidjson::SizeType>(opts.snapshot.size()));
  } else if (opts.cmd == command::release) {
    w.Key("id");
    w.String(opts.mount_id.c_str(), static_cast<rapidjson::SizeType>(opts.mount_id.size()));
  } else if (opts.cmd == command::resize) {
    w.Key("size_bytes");
    w.Uint64(opts.size_bytes);
  } else {
    w.Key("parameters");
    w.StartObject();
    for (const auto& [k, v] : opts.parameters) {
      w.Key(k.c_str(), static_cast<rapidjson::SizeType>(k.size()));
      w.String(v.c_str(), static_cast<rapidjson::SizeType>(v.size()));
    }
    w.EndObject();
  }
  w.EndObject();
  return {buf.GetString(), buf.GetSize()};
}

} // namespace

caf::expected<std::string> admin_request(unix_http_client& client, const std::string& socket,
                                         const std::string& target,
                                         const std::string* post_body, bool remove) {
  auto res = remove                ? client.remove(target)
             : post_body != nullptr ? client.post(target, *post_body, "application/json")
                                    : client.get(target);
  if (!res) {
    // The client's own messages name the socket and how long it waited.
    if (is(res.error(), ec::timeout)) {
      return make_error(client_ec::no_answer, describe(res.error()));
    }
    if (is(res.error(), ec::aborted)) {
      return make_error(client_ec::interrupted, describe(res.error()));
    }
    return make_error(client_ec::unreachable,
                      unreachable_message(socket, client.connect_errno(),
                                          describe(res.error())));
  }
  if (res->status != 200) {
    return make_error(http_error_code(res->status), error_of(*res));
  }
  return std::move(res->body);
}

namespace {

/// The admin API's route of a command other than help, version and top.
std::string target_of(const options& opts) {
  switch (opts.cmd) {
    case command::status: return "/v1/status";
    case command::volumes: return "/v1/volumes";
    case command::resize: return "/v1/volumes/" + opts.name + "/resize";
    case command::modify: return "/v1/volumes/" + opts.name + "/modify";
    case command::release: return "/v1/volumes/" + opts.name + "/release";
    case command::snapshot_create: return "/v1/volumes/" + opts.name + "/snapshot";
    case command::snapshot_list: return "/v1/snapshots";
    case command::snapshot_remove: return "/v1/snapshots/" + opts.name;
    case command::snapshot_diff: return "/v1/snapshots/" + opts.name + "/diff?base=" + opts.base;
    case command::unclaimed_list: return "/v1/unclaimed";
    case command::unclaimed_remove: return "/v1/unclaimed/" + opts.name;
    default: return "/v1/volumes/" + opts.name; // inspect
  }
}

/// The text a command prints for berthd's answer `body`.
caf::expected<std::string> text_of(const options& opts, const std::string& body) {
  switch (opts.cmd) {
    case command::status: {
      auto status = parse_status(body);
      if (!status) {
        return unreadable_answer(status.error());
      }
      return format_status(*status);
    }
    case command::release: {
      auto text = format_release(body);
      return text ? text : unreadable_answer(text.error());
    }
    case command::volumes: {
      auto recs = records_from_json(body);
      if (!recs) {
        return unreadable_answer(recs.error());
      }
      return format_table(*recs, figures_of(body));
    }
    case command::snapshot_list: {
      auto recs = records_from_json(body);
      if (!recs) {
        return unreadable_answer(recs.error());
      }
      return format_snapshots(*recs, opts.name);
    }
    case command::snapshot_remove:
      return "snapshot " + opts.name + " removed\n";
    case command::snapshot_diff: {
      auto text = format_diff(body);
      return text ? text : unreadable_answer(text.error());
    }
    case command::unclaimed_list: {
      auto text = format_unclaimed(body);
      return text ? text : unreadable_answer(text.error());
    }
    case command::unclaimed_remove:
      return "unclaimed " + opts.name + " removed, with its storage\n";
    case command::snapshot_create: {
      auto rec = record_from_json(body);
      if (!rec) {
        return unreadable_answer(rec.error());
      }
      return "snapshot " + rec->name + " of volume " + rec->source.name + " taken ("
             + format_size(rec->capacity_bytes) + ")\n";
    }
    default: {
      auto rec = record_from_json(body);
      if (!rec) {
        return make_error(client_ec::bad_answer,
                          "berthd sent an unreadable record: " + describe(rec.error()));
      }
      bool change = opts.cmd == command::resize || opts.cmd == command::modify;
      return change ? format_change(*rec, opts.cmd) : format_record(*rec, figures_of(body));
    }
  }
}

/// What a command other than help, version and top prints on success: berthd's JSON with
/// --json, else its text.
caf::expected<std::string> answer_of(const options& opts) {
  unix_http_client client{opts.socket};
  client.set_timeout(opts.timeout);
  bool post = opts.cmd == command::resize || opts.cmd == command::modify
              || opts.cmd == command::release || opts.cmd == command::snapshot_create;
  auto sent = change_body(opts);
  auto body = admin_request(client, opts.socket, target_of(opts), post ? &sent : nullptr,
                            opts.cmd == command::snapshot_remove
                              || opts.cmd == command::unclaimed_remove);
  if (!body) {
    return body.error();
  }
  if (opts.json) {
    return *body + "\n";
  }
  return text_of(opts, *body);
}

} // namespace

caf::error answer_error(unsigned status, const std::string& body) {
  return make_error(http_error_code(status), error_of(http_response{status, body}));
}

int run(const std::vector<std::string>& args, std::ostream& out, std::ostream& err, int in_fd,
        int out_fd) {
  auto opts = parse_args(args);
  if (!opts) {
    // The command line did not parse, so --json is looked for by itself: a script that
    // asked for JSON gets its error as JSON too.
    bool json = std::find(args.begin(), args.end(), "--json") != args.end();
    report_failure(err, opts.error(), json);
    if (!json) {
      err << usage();
    }
    return exit_usage;
  }
  if (opts->cmd == command::help) {
    out << usage();
    return exit_ok;
  }
  if (opts->cmd == command::version) {
    if (opts->json) {
      out << R"({"berthctl":")" << BERTH_VERSION << "\"}\n";
    } else {
      out << "berthctl " << BERTH_VERSION << "\n";
    }
    return exit_ok;
  }
  if (opts->cmd == command::top) {
    return run_top(*opts, out, err);
  }
  if (opts->cmd == command::export_volume) {
    return run_export(*opts, out_fd, err);
  }
  if (opts->cmd == command::import_volume) {
    return run_import(*opts, in_fd, out, err);
  }
  auto text = answer_of(*opts);
  if (!text) {
    report_failure(err, text.error(), opts->json);
    return exit_failure;
  }
  out << *text;
  return exit_ok;
}

} // namespace berth::cli
