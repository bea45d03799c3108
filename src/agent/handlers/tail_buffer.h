#pragma once

// Bounded buffers for the output of child processes.
//
// TailBuffer keeps only the last `limit` bytes of a stream of any size, so a
// handler that prints 10 GB costs the agent a few KiB. LineSplitter cuts a
// byte stream into lines for a callback, dropping the excess of any line
// longer than its limit instead of growing without bound.
//
// Thread-safety: none; each belongs to one poll loop.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace apollo::agent {

class TailBuffer {
 public:
  explicit TailBuffer(size_t limit) : limit_(limit) {}

  void Append(std::string_view bytes) {
    total_ += bytes.size();
    if (bytes.size() >= limit_) {
      data_.assign(bytes.substr(bytes.size() - limit_));
      return;
    }
    data_.append(bytes);
    // Trim lazily (at 2x) so appends stay amortised O(1).
    if (data_.size() > 2 * limit_) data_.erase(0, data_.size() - limit_);
  }

  // The last min(limit, total) bytes.
  std::string Tail() const {
    return data_.size() > limit_ ? data_.substr(data_.size() - limit_) : data_;
  }
  uint64_t total_bytes() const { return total_; }
  bool truncated() const { return total_ > limit_; }

 private:
  size_t limit_;
  std::string data_;
  uint64_t total_ = 0;
};

class LineSplitter {
 public:
  using LineFn = std::function<void(std::string_view line)>;

  LineSplitter(size_t max_line, LineFn fn) : max_line_(max_line), fn_(std::move(fn)) {}

  void Feed(std::string_view bytes) {
    while (!bytes.empty()) {
      size_t nl = bytes.find('\n');
      std::string_view part = bytes.substr(0, nl);
      if (partial_.size() < max_line_) {
        partial_.append(part.substr(0, max_line_ - partial_.size()));
      }
      if (nl == std::string_view::npos) return;
      Emit();
      bytes.remove_prefix(nl + 1);
    }
  }

  // Delivers a last line that had no newline.
  void Finish() {
    if (!partial_.empty()) Emit();
  }

 private:
  void Emit() {
    if (!partial_.empty() && partial_.back() == '\r') partial_.pop_back();
    if (fn_) fn_(partial_);
    partial_.clear();
  }

  size_t max_line_;
  LineFn fn_;
  std::string partial_;
};

}  // namespace apollo::agent
