#pragma once

// Bounded buffers for the output of child processes.
//
// TailBuffer keeps only the last `limit` bytes of a stream of any size, so a
// handler that prints 10 GB costs the agent a few KiB. LineSplitter cuts a
// byte stream into lines for a callback, dropping the excess of any line
// longer than its limit instead of growing without bound. HidingTail feeds
// a TailBuffer but leaves out the lines a predicate claims (exec's progress
// lines), so they cannot push real output out of the tail.
//
// Thread-safety: none; each belongs to one poll loop.

#include <algorithm>
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

// Feeds `tail` with a byte stream minus the lines that begin with `marker`
// and that `hide` returns true for (given without "\n" / "\r\n"). Every
// other byte reaches the tail as written, and at once: only a line that
// still may be a marker line is held back, and one longer than `max_line`
// is passed on as output. Memory: at most max_line plus one fed chunk.
class HidingTail {
 public:
  using HideFn = std::function<bool(std::string_view line)>;

  HidingTail(TailBuffer& tail, std::string marker, size_t max_line, HideFn hide)
      : tail_(tail), marker_(std::move(marker)), max_line_(max_line), hide_(std::move(hide)) {}

  void Feed(std::string_view bytes) {
    while (!bytes.empty()) {
      size_t nl = bytes.find('\n');
      size_t n = nl == std::string_view::npos ? bytes.size() : nl + 1;
      std::string_view part = bytes.substr(0, n);
      bytes.remove_prefix(n);
      if (passing_) {
        tail_.Append(part);
        passing_ = nl == std::string_view::npos;
        continue;
      }
      held_.append(part);
      if (nl != std::string_view::npos) {
        Decide();
      } else if (!MayBeMarkerLine() || held_.size() > max_line_) {
        tail_.Append(held_);
        held_.clear();
        passing_ = true;
      }
    }
  }

  // Decides a last line that had no newline.
  void Finish() {
    if (!held_.empty()) Decide();
    passing_ = false;
  }

 private:
  bool MayBeMarkerLine() const {
    size_t n = std::min(held_.size(), marker_.size());
    return held_.compare(0, n, marker_, 0, n) == 0;
  }

  // held_ is a whole line (with its newline, unless at the end).
  void Decide() {
    std::string_view line(held_);
    if (!line.empty() && line.back() == '\n') line.remove_suffix(1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    bool hidden = held_.size() <= max_line_ + 2 && line.substr(0, marker_.size()) == marker_ &&
                  hide_ && hide_(line);
    if (!hidden) tail_.Append(held_);
    held_.clear();
  }

  TailBuffer& tail_;
  std::string marker_;
  size_t max_line_;
  HideFn hide_;
  std::string held_;      // the start of a line that may be a marker line
  bool passing_ = false;  // inside a line already known not to be hidden
};

}  // namespace apollo::agent
