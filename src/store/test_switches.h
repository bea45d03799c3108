#pragma once

// Planted bugs for the chaos checker's own tests (tests/chaos): each switch
// breaks one guarantee of applying agent events (or of fencing), so a test can show the
// checker catches it. The store engine's apply path honours them.
//
// Off unless installed: only the test builds of the daemons
// (build/*/test-bin/, compiled with APOLLO_TEST_HOOKS) install them, from
// the environment (store/testing/test_switches_env.h). The shipped
// binaries in bin/ never call Install, so nothing in their environment can
// turn a safety check off.
//
// Thread-safety: Install once in main(), before any thread; Get from any.

namespace apollo::store {

struct TestSwitches {
  bool disable_dedup = false;
  bool disable_fencing = false;
  bool disable_transition_check = false;
  // Fenced writes (lease.h) are not checked against their lease's epoch.
  bool disable_lease_fence = false;
  // Every Nth event is marked stored but not applied or recorded (0: off).
  long drop_event_every = 0;

  static const TestSwitches& Get() { return Mutable(); }
  static void Install(const TestSwitches& s) { Mutable() = s; }

 private:
  static TestSwitches& Mutable() {
    static TestSwitches s;
    return s;
  }
};

}  // namespace apollo::store
