#pragma once

// Which orchestrator replica the agent dials next (session.h). Several
// replicas may share one store (docs/replicas.md) but only the leader takes
// agents: a follower refuses the Hello and names the leader's address.
//
// After a failure on current() (cannot connect, stream broken, Hello
// refused) the ring moves on: to the leader the refusal named when that is
// one of its addresses not yet failed this round, else to the next address
// in order that has not. A round ends once every address failed in it;
// until then the caller retries soon (another replica may lead, or know who
// does); at its end the caller backs off as it would from a single center,
// so a fleet cannot spin on replicas that all refuse. Each round dials each
// address at most once.
//
// With one address every failure ends a round: the session's backoff alone
// decides, as before replicas.
//
// Thread-safety: a value; the session thread owns it.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/config_values.h"

namespace apollo::agent {

class AddressRing {
 public:
  // `addresses`: host:port, in the operator's order. An empty list is
  // taken as the default 127.0.0.1:7011 (AgentConfig never gives one).
  explicit AddressRing(std::vector<std::string> addresses);

  const std::string& current() const { return addresses_[index_]; }
  size_t size() const { return addresses_.size(); }
  const std::vector<std::string>& addresses() const { return addresses_; }

  // The index of `address` among the ring's, compared as host:port (so a
  // refusal that spells the leader "[::1]:7011" finds that entry); nullopt
  // when it is not one of them, or empty.
  std::optional<size_t> Find(std::string_view address) const;

  // A session on current() was accepted: the next failure starts a round.
  void Reset();

  // current() failed. `leader`: the address a follower's refusal named
  // ("" if none). Moves to the address to dial next and returns true while
  // this round has one left that has not failed (retry soon); false when
  // this failure ended the round (back off first; a new round begins, at
  // `leader` when it is one of the ring's).
  bool Failed(std::string_view leader = {});

 private:
  std::vector<std::string> addresses_;
  std::vector<std::optional<HostPort>> parsed_;  // addresses_ parsed, for Find
  std::vector<bool> failed_;                     // in this round
  size_t index_ = 0;
};

}  // namespace apollo::agent
