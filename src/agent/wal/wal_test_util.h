#pragma once

// Helpers shared by the WAL tests: a temporary directory, file surgery for
// damaging segments on purpose, and event builders.
//
// Thread-safety: TempDir is not thread-safe; the free functions share no state.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "agent/wal/file_util.h"
#include "agent/wal/segment_reader.h"
#include "agent/wal/wal.h"
#include "agent/wal/wal_format.h"
#include "core/event.h"

namespace apollo::wal::testing {

// A fresh directory under the test temp dir, removed (recursively) on exit.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = ::testing::TempDir() + "apollo-wal-XXXXXX";
    char* p = ::mkdtemp(tmpl.data());
    EXPECT_NE(p, nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

// Opens the WAL in `dir`, or records a test failure and returns null.
inline std::unique_ptr<Wal> OpenOrDie(const std::string& dir, const WalOptions& opts,
                                      const Clock& clock) {
  Result<std::unique_ptr<Wal>> w = Wal::Open(dir, opts, clock);
  EXPECT_TRUE(w.ok()) << w.status().ToString();
  return w.ok() ? std::move(*w) : nullptr;
}

inline std::vector<std::string> SegmentFiles(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    std::string name = e.path().filename().string();
    if (ParseSegmentFileName(name)) {
      out.push_back(name);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

inline std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

inline void WriteAllBytes(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
}

// Offsets of the valid records of a segment file, in order.
inline std::vector<uint64_t> RecordOffsets(const std::string& path) {
  std::string data = ReadAll(path);
  std::vector<uint64_t> offsets;
  ScanSegment(data, [&](const ScannedRecord& r) { offsets.push_back(r.offset); });
  return offsets;
}

// The scan of a segment's bytes (records only counted, not kept).
inline SegmentScan Scan(const std::string& data) {
  return ScanSegment(data, [](const ScannedRecord&) {});
}

inline Event MakeEvent(int i, const std::string& node = "node-1") {
  Event e;
  e.task_id = "task-" + std::to_string(i % 7);
  e.node_id = node;
  e.attempt = 1;
  e.type = EventType::kProgress;
  e.timestamp = FromUnixMicros(1'700'000'000'000'000 + i);
  e.payload = "{\"i\":" + std::to_string(i) + ",\"message\":\"working on it\"}";
  return e;
}

}  // namespace apollo::wal::testing
