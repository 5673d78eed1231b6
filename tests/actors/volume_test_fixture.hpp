#pragma once

// The fixture of the volume actor's Docker tests (volume_test.cpp): volume v1 with a
// 500 ms backend timeout, and its create and mount as calls that must succeed.

#include <chrono>
#include <cstdint>
#include <string>

#include <gtest/gtest.h>

#include "core/errors.hpp"
#include "tests/actors/fakes.hpp"

namespace berth::test {

class volume_test : public volume_fixture {
protected:
  void SetUp() override {
    spawn_volume("v1", std::chrono::milliseconds{500});
  }

  std::string mount(const std::string& id) {
    std::string mp;
    self->request(vol, std::chrono::seconds{5}, atom::mount_v, id, std::string{}, caller{})
      .receive([&](std::string& out) { mp = out; },
               [&](caf::error& err) { ADD_FAILURE() << describe(err); });
    return mp;
  }

  void create() {
    ASSERT_FALSE(test::call<atom::ok>(self, vol, atom::create_v, option_map{}, uint64_t{0})) << "create failed";
  }
};

inline uint8_t code(const caf::error& err) {
  return err.code();
}

} // namespace berth::test
