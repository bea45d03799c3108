#include "agent/task_table.h"

namespace apollo::agent {

Claim TaskTable::ClaimTask(const std::string& task_id, uint32_t attempt,
                           const std::string& intent, int64_t now_us) {
  auto it = tasks_.find(task_id);
  if (it != tasks_.end()) {
    LocalTask& t = it->second;
    if (t.state == TaskState::kSucceeded) return Claim::kAlreadyDone;
    if (t.state == TaskState::kRunning) return Claim::kAlreadyRunning;
    // FAILED, TIMEOUT or CANCELLED: only a newer attempt runs again.
    if (attempt <= t.attempt) return Claim::kAlreadyFinished;
  }
  LocalTask& t = tasks_[task_id];
  t = LocalTask{};
  t.task_id = task_id;
  t.attempt = attempt;
  t.intent = intent;
  t.state = TaskState::kRunning;
  t.updated_at_us = now_us;
  return Claim::kNew;
}

bool TaskTable::ApplyEvent(const Event& e) {
  auto it = tasks_.find(e.task_id);
  if (it != tasks_.end() && e.attempt < it->second.attempt) return false;
  if (e.type == EventType::kAccepted) {
    if (it == tasks_.end() || it->second.attempt != e.attempt) {
      // First sight of this attempt (replay, or a claim made by a previous
      // run of the agent): a fresh entry.
      LocalTask fresh;
      fresh.task_id = e.task_id;
      fresh.attempt = e.attempt;
      it = tasks_.insert_or_assign(e.task_id, std::move(fresh)).first;
    }
    LocalTask& t = it->second;
    if (t.accepted_logged) return false;
    t.accepted_logged = true;
    t.state = TaskState::kRunning;
    t.last_seq = e.sequence_number;
    t.updated_at_us = ToUnixMicros(e.timestamp);
    auto j = e.payload.empty() ? nlohmann::json() : nlohmann::json::parse(e.payload, nullptr, false);
    if (j.is_object() && j.contains("intent") && j["intent"].is_string()) {
      t.intent = j["intent"].get<std::string>();
    }
    return true;
  }
  if (it == tasks_.end()) return false;
  LocalTask& t = it->second;
  std::optional<TaskState> to = TargetState(e.type);
  // Redelivery answers and progress do not move the local state machine.
  if (!to || e.type == EventType::kAlreadyDone || e.type == EventType::kAlreadyRunning) {
    t.last_seq = std::max(t.last_seq, e.sequence_number);
    return false;
  }
  if (t.state != TaskState::kRunning) return false;  // already final locally
  t.state = *to;
  t.last_seq = e.sequence_number;
  t.updated_at_us = ToUnixMicros(e.timestamp);
  auto j = e.payload.empty() ? nlohmann::json() : nlohmann::json::parse(e.payload, nullptr, false);
  if (*to == TaskState::kSucceeded) {
    t.result_json = (j.is_object() && j.contains("result")) ? j["result"].dump() : "{}";
  } else if (j.is_object() && j.contains("error") && j["error"].is_string()) {
    t.error = j["error"].get<std::string>();
  }
  NoteFinished(e.task_id);
  return true;
}

void TaskTable::NoteFinished(const std::string& task_id) {
  finished_order_.push_back(task_id);
  // Evict the oldest finished entries beyond the cap. An id may appear in
  // finished_order_ more than once (retried tasks); only evict if the entry
  // is still finished.
  while (finished_order_.size() > max_finished_) {
    auto victim = tasks_.find(finished_order_.front());
    finished_order_.pop_front();
    if (victim != tasks_.end() && victim->second.state != TaskState::kRunning) {
      tasks_.erase(victim);
    }
  }
}

void TaskTable::Forget(const std::string& task_id) { tasks_.erase(task_id); }

const LocalTask* TaskTable::Find(const std::string& task_id) const {
  auto it = tasks_.find(task_id);
  return it == tasks_.end() ? nullptr : &it->second;
}

std::vector<const LocalTask*> TaskTable::Unfinished() const {
  std::vector<const LocalTask*> out;
  for (const auto& [id, t] : tasks_) {
    if (t.state == TaskState::kRunning) out.push_back(&t);
  }
  return out;
}

std::vector<LocalTask> TaskTable::All() const {
  std::vector<LocalTask> out;
  out.reserve(tasks_.size());
  for (const auto& [id, t] : tasks_) out.push_back(t);
  return out;
}

std::string TaskTable::Serialize() const {
  nlohmann::json tasks = nlohmann::json::array();
  for (const auto& [id, t] : tasks_) {
    tasks.push_back({{"task_id", t.task_id},
                     {"attempt", t.attempt},
                     {"intent", t.intent},
                     {"state", TaskStateName(t.state)},
                     {"accepted", t.accepted_logged},
                     {"result", t.result_json},
                     {"error", t.error},
                     {"last_seq", t.last_seq},
                     {"updated_at_us", t.updated_at_us}});
  }
  return nlohmann::json{{"tasks", tasks}}.dump();
}

Status TaskTable::Restore(std::string_view checkpoint) {
  auto j = nlohmann::json::parse(checkpoint, nullptr, false);
  if (!j.is_object() || !j.contains("tasks") || !j["tasks"].is_array()) {
    return Status::DataLoss("agent checkpoint is not valid JSON of the expected shape");
  }
  std::map<std::string, LocalTask> restored;
  std::deque<std::string> finished;
  try {
    for (const auto& e : j["tasks"]) {
      LocalTask t;
      t.task_id = e.at("task_id").get<std::string>();
      t.attempt = e.at("attempt").get<uint32_t>();
      t.intent = e.value("intent", "");
      auto state = ParseTaskState(e.at("state").get<std::string>());
      if (!state) return Status::DataLoss("agent checkpoint has an unknown state");
      t.state = *state;
      t.accepted_logged = e.value("accepted", true);
      t.result_json = e.value("result", "");
      t.error = e.value("error", "");
      t.last_seq = e.value("last_seq", uint64_t{0});
      t.updated_at_us = e.value("updated_at_us", int64_t{0});
      if (t.state != TaskState::kRunning) finished.push_back(t.task_id);
      restored[t.task_id] = std::move(t);
    }
  } catch (const nlohmann::json::exception& ex) {
    return Status::DataLoss(std::string("agent checkpoint: ") + ex.what());
  }
  tasks_ = std::move(restored);
  finished_order_ = std::move(finished);
  return Status::Ok();
}

}  // namespace apollo::agent
