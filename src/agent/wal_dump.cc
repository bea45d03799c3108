#include "agent/wal_dump.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/wal/segment_reader.h"
#include "core/event.h"

namespace apollo::agent {

int DumpWal(const std::string& dir, std::ostream& out, std::ostream& err) {
  namespace fs = std::filesystem;
  std::error_code ec;
  std::vector<fs::path> segments;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    std::string name = entry.path().filename().string();
    if (name.rfind("wal-", 0) == 0 && entry.path().extension() == ".log") {
      segments.push_back(entry.path());
    }
  }
  if (ec) {
    err << "edge-agent: cannot read " << dir << ": " << ec.message() << "\n";
    return 1;
  }
  std::sort(segments.begin(), segments.end());  // zero-padded indexes sort by name
  for (const auto& path : segments) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string data = ss.str();
    wal::SegmentScan scan = wal::ScanSegment(data, [&](const wal::ScannedRecord& r) {
      if (r.type != wal::RecordType::kEvent) return;
      auto e = DecodeEvent(r.payload);
      if (e.ok()) out << EventToJson(*e).dump() << "\n";
    });
    for (const auto& d : scan.damaged) {
      err << path.filename().string() << "@" << d.offset << "+" << d.length << ": " << d.reason
          << "\n";
    }
  }
  return 0;
}

}  // namespace apollo::agent
