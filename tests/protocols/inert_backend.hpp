#pragma once

// A backend for the adapters' tests: named as the test needs, and inert in every Docker
// call, which those tests never reach. A test overrides what its adapter asks.

#include <string>
#include <utility>

#include "backends/backend.hpp"

namespace berth::test {

class inert_backend : public backend {
public:
  explicit inert_backend(std::string name = "block") : name_(std::move(name)) {}
  std::string name() const override { return name_; }
  caf::error validate(const std::string&, const option_map&) const override { return {}; }
  caf::error create(const volume_record&) override { return {}; }
  caf::expected<std::string> mount(const volume_record&) override { return std::string{"/x"}; }
  caf::error unmount(const volume_record&, bool) override { return {}; }
  caf::error remove(const volume_record&) override { return {}; }
  std::string mountpoint(const volume_record&) const override { return "/x"; }

private:
  std::string name_;
};

} // namespace berth::test
