// The agent's choice of the next orchestrator replica to dial.
#include "agent/address_ring.h"

#include <algorithm>

namespace apollo::agent {

AddressRing::AddressRing(std::vector<std::string> addresses) : addresses_(std::move(addresses)) {
  if (addresses_.empty()) addresses_.push_back("127.0.0.1:7011");
  for (const std::string& a : addresses_) {
    auto hp = ParseHostPort(a);
    parsed_.push_back(hp.ok() ? std::optional<HostPort>(*hp) : std::nullopt);
  }
  failed_.assign(addresses_.size(), false);
}

std::optional<size_t> AddressRing::Find(std::string_view address) const {
  if (address.empty()) return std::nullopt;
  auto hp = ParseHostPort(address);
  for (size_t i = 0; i < addresses_.size(); ++i) {
    // As host:port when both parse ("[::1]:7011" is host ::1), else as typed.
    const bool same = (hp.ok() && parsed_[i]) ? *parsed_[i] == *hp : addresses_[i] == address;
    if (same) return i;
  }
  return std::nullopt;
}

void AddressRing::Reset() { std::fill(failed_.begin(), failed_.end(), false); }

bool AddressRing::Failed(std::string_view leader) {
  failed_[index_] = true;
  const std::optional<size_t> named = Find(leader);
  if (std::all_of(failed_.begin(), failed_.end(), [](bool f) { return f; })) {
    // Every address had its chance: the caller backs off, then a new round
    // starts where the last refusal pointed, or at the next address.
    Reset();
    index_ = named ? *named : (index_ + 1) % addresses_.size();
    return false;
  }
  if (named && !failed_[*named]) {
    index_ = *named;
    return true;
  }
  // At least one address has not failed this round: the walk stops there.
  do {
    index_ = (index_ + 1) % addresses_.size();
  } while (failed_[index_]);
  return true;
}

}  // namespace apollo::agent
