#include "orchestrator/submit.h"

#include <set>

namespace apollo::orchestrator {
namespace {

void AddError(apollo::v1::SubmitTasksResponse* resp, const std::string& file, int line,
              std::string message) {
  auto* d = resp->add_errors();
  d->set_file(file);
  d->set_line(line);
  d->set_column(1);
  d->set_message(std::move(message));
}

std::string Describe(const TargetSelector& s) {
  switch (s.type) {
    case SelectorType::kLabel: return "label " + s.key + "=" + s.value;
    case SelectorType::kGroup: return "group " + s.group;
    case SelectorType::kNodes: return "nodes";
  }
  return "selector";
}

}  // namespace

Status SubmitTaskFile(const apollo::v1::SubmitTasksRequest& req, store::StateStore& store,
                      TaskIdGenerator& ids, apollo::v1::SubmitTasksResponse* resp) {
  const std::string file = req.file_name().empty() ? "<request>" : req.file_name();
  Status lookup_error;
  auto exists = [&](std::string_view id) {
    auto t = store.GetTask(id);
    if (!t.ok() && t.status().code() != StatusCode::kNotFound) lookup_error = t.status();
    return t.ok();
  };
  ParsedTasks parsed = ParseTaskFile(req.content(), file, ParseLimits{}, exists);
  APOLLO_RETURN_IF_ERROR(lookup_error);
  for (const auto& d : parsed.errors) {
    auto* e = resp->add_errors();
    e->set_file(d.file);
    e->set_line(d.line);
    e->set_column(d.column);
    e->set_message(d.message);
  }
  if (!parsed.ok()) return Status::Ok();

  std::vector<store::NewTask> tasks;
  for (TaskSpec& spec : parsed.tasks) {
    if (spec.task_id_generated) spec.task_id = ids.Generate(spec.intent);
    auto nodes = store.ResolveSelector(spec.target_selector);
    if (!nodes.ok()) return nodes.status();
    if (nodes->empty() && !spec.target_selector.allow_empty) {
      AddError(resp, file, 1,
               "task '" + spec.task_id + "': target_selector (" + Describe(spec.target_selector) +
                   ") matches no registered node; set allow_empty: true to accept that");
      continue;
    }
    if (spec.target_selector.type == SelectorType::kNodes) {
      auto known = store.ListNodes();
      if (!known.ok()) return known.status();
      std::set<std::string> registered;
      for (const auto& n : *known) {
        if (n.registered) registered.insert(n.node_id);
      }
      for (const auto& n : *nodes) {
        if (!registered.count(n)) {
          resp->add_warnings("task '" + spec.task_id + "': node '" + n +
                             "' has never registered; its work waits (blocked_reason "
                             "node_not_registered)");
        }
      }
    }
    tasks.push_back(store::NewTask{spec, *nodes});
  }
  if (resp->errors_size() > 0) return Status::Ok();

  std::vector<store::CreatedTask> created;
  if (!req.dry_run()) {
    auto r = store.CreateTasks(tasks);
    if (!r.ok()) {
      if (r.status().code() == StatusCode::kAlreadyExists) {
        AddError(resp, file, 1, r.status().message());
        return Status::Ok();
      }
      return r.status();
    }
    created = std::move(*r);
  }
  for (size_t i = 0; i < tasks.size(); ++i) {
    auto* t = resp->add_tasks();
    t->set_task_id(tasks[i].spec.task_id);
    t->set_created(!req.dry_run() && i < created.size() && created[i].created);
    for (const auto& n : tasks[i].node_ids) t->add_nodes(n);
  }
  return Status::Ok();
}

}  // namespace apollo::orchestrator
