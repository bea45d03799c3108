#pragma once

// A real SQLite store in a fresh temp dir, for the orchestrator's unit
// tests; the dir goes with it. synchronous=NORMAL: tests that commit
// thousands of single rows stay fast (durability is the store's own tests').

#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "core/clock.h"
#include "store/open_store.h"

namespace apollo::orchestrator::testing {

class TempStore {
 public:
  // `status()` says whether it opened.
  explicit TempStore(const Clock& clock) {
    char tmpl[] = "/tmp/apollo-orchestrator-test-XXXXXX";
    if (::mkdtemp(tmpl) == nullptr) {
      status_ = Status::Internal("mkdtemp failed");
      return;
    }
    dir_ = tmpl;
    store::StoreOptions opts;
    opts.sqlite_synchronous = "NORMAL";
    auto s = store::OpenStateStore("sqlite://" + dir_ + "/s.db", opts, clock);
    if (!s.ok()) {
      status_ = s.status();
      return;
    }
    store_ = std::move(*s);
  }
  ~TempStore() {
    store_.reset();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  TempStore(const TempStore&) = delete;
  TempStore& operator=(const TempStore&) = delete;

  const Status& status() const { return status_; }
  // Null when it did not open.
  store::StateStore* store() { return store_.get(); }

 private:
  Status status_;
  std::string dir_;
  std::unique_ptr<store::StateStore> store_;
};

}  // namespace apollo::orchestrator::testing
