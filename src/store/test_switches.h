#pragma once

// Planted bugs for the chaos checker's own tests (tests/chaos): each
// environment variable, when set, breaks one guarantee of applying agent
// events, so a test can show the checker catches it. Both backends' apply.cc
// honour them the same way. Never set outside those tests; read once.

#include <cstdlib>

namespace apollo::store {

struct TestSwitches {
  bool disable_dedup = std::getenv("APOLLO_TEST_DISABLE_DEDUP") != nullptr;
  bool disable_fencing = std::getenv("APOLLO_TEST_DISABLE_FENCING") != nullptr;
  bool disable_transition_check = std::getenv("APOLLO_TEST_DISABLE_TRANSITION_CHECK") != nullptr;
  // Every Nth event is marked stored but not applied or recorded (0: off).
  long drop_event_every =
      std::getenv("APOLLO_TEST_DROP_EVENT_EVERY")
          ? std::strtol(std::getenv("APOLLO_TEST_DROP_EVENT_EVERY"), nullptr, 10)
          : 0;

  // The process's switches, read from the environment on first use.
  static const TestSwitches& Get() {
    static const TestSwitches s;
    return s;
  }
};

}  // namespace apollo::store
