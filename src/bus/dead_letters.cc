#include "bus/dead_letters.h"

#include <algorithm>

namespace apollo::bus {
namespace {

// Empty when the event can be applied now; otherwise why not.
Result<std::string> StillPoison(store::StateStore& store, const Event& e) {
  if (Status v = ValidateEvent(e); !v.ok()) return "malformed: " + v.message();
  Result<store::TaskRow> t = store.GetTask(e.task_id);
  if (!t.ok()) {
    if (t.status().code() == StatusCode::kNotFound) return "unknown task " + e.task_id;
    return t.status();
  }
  bool has_node = std::any_of(t->nodes.begin(), t->nodes.end(),
                              [&](const store::NodeRow& n) { return n.node_id == e.node_id; });
  if (!has_node) return "unknown task " + e.task_id + " on node " + e.node_id;
  return std::string();
}

Status ApplyAndRemove(store::StateStore& store, DeadLetterBook& book,
                      const store::DeadLetter& letter) {
  Event e = FromLetterEvent(letter.event);
  Result<store::ApplyResult> r = store.Apply({e});
  if (!r.ok()) return r.status();
  APOLLO_RETURN_IF_ERROR(store.DropDeadLetter(letter.id));
  book.Forget(e.event_id());
  return Status::Ok();
}

}  // namespace

Status ReplayLetter(store::StateStore& store, DeadLetterBook& book, int64_t id) {
  Result<store::DeadLetter> letter = store.GetDeadLetter(id);
  if (!letter.ok()) return letter.status();
  Result<std::string> why = StillPoison(store, FromLetterEvent(letter->event));
  if (!why.ok()) return why.status();
  if (!why->empty()) {
    return Status::FailedPrecondition("dead letter " + std::to_string(id) +
                                      " still cannot be applied: " + *why);
  }
  return ApplyAndRemove(store, book, *letter);
}

Result<int> ReplayAllLetters(store::StateStore& store, DeadLetterBook& book) {
  int applied = 0;
  int64_t after = 0;
  for (;;) {
    auto page = store.ListDeadLetters(after, 500);
    if (!page.ok()) return page.status();
    for (const store::DeadLetter& d : *page) {
      after = std::max(after, d.id);
      Status s = ReplayLetter(store, book, d.id);
      if (s.ok()) {
        ++applied;
      } else if (s.code() != StatusCode::kFailedPrecondition &&
                 s.code() != StatusCode::kNotFound) {
        return s;
      }
    }
    if (page->size() < 500) return applied;
  }
}

Status DropLetter(store::StateStore& store, DeadLetterBook& book, int64_t id) {
  Result<store::DeadLetter> letter = store.GetDeadLetter(id);
  if (!letter.ok()) return letter.status();
  return ApplyAndRemove(store, book, *letter);
}

}  // namespace apollo::bus
