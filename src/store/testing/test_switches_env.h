#pragma once

// The planted-bug switches from APOLLO_TEST_* environment variables: for
// the test builds of the daemons only (APOLLO_TEST_HOOKS); never included
// by a shipped binary.

#include <cstdlib>

#include "store/test_switches.h"

namespace apollo::store::testing {

inline TestSwitches TestSwitchesFromEnvironment() {
  TestSwitches s;
  s.disable_dedup = std::getenv("APOLLO_TEST_DISABLE_DEDUP") != nullptr;
  s.disable_fencing = std::getenv("APOLLO_TEST_DISABLE_FENCING") != nullptr;
  s.disable_transition_check = std::getenv("APOLLO_TEST_DISABLE_TRANSITION_CHECK") != nullptr;
  s.disable_lease_fence = std::getenv("APOLLO_TEST_DISABLE_LEASE_FENCE") != nullptr;
  if (const char* n = std::getenv("APOLLO_TEST_DROP_EVENT_EVERY")) {
    s.drop_event_every = std::strtol(n, nullptr, 10);
  }
  return s;
}

}  // namespace apollo::store::testing
