#include "orchestrator/submit.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "core/task_spec_proto.h"
#include "core/yaml_reader.h"

namespace apollo::orchestrator {
namespace {

void AddError(apollo::v1::SubmitTasksResponse* resp, const std::string& file, int line,
              std::string message, int column = 1, int task_index = -1) {
  auto* d = resp->add_errors();
  d->set_file(file);
  d->set_line(line);
  d->set_column(column);
  d->set_message(std::move(message));
  if (task_index >= 0) d->set_task_index(task_index);
}

std::string Join(const std::set<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// Why none of `nodes` runs `intent`, or "" when one does (or when none has
// said what it runs: an agent older than intent advertising, or a node that
// never registered, is not judged here).
std::string IntentProblem(const std::string& intent, const std::vector<std::string>& nodes,
                          const std::map<std::string, const store::NodeInfo*>& known) {
  std::set<std::string> offered, disabled_on;
  size_t judged = 0;
  for (const auto& id : nodes) {
    auto it = known.find(id);
    if (it == known.end() || !it->second->registered || it->second->intents.empty()) continue;
    const store::NodeInfo& n = *it->second;
    ++judged;
    for (const auto& i : n.intents) {
      if (i == intent) return "";
      offered.insert(i);
    }
    for (const auto& i : n.disabled_intents) {
      if (i == intent) disabled_on.insert(id);
    }
  }
  if (judged == 0) return "";
  const std::string where = judged == 1 ? "its matched node" : "any of its " +
                                                                   std::to_string(judged) +
                                                                   " matched nodes";
  if (!disabled_on.empty()) {
    return "intent " + internal::Quote(intent) + " is disabled on " + Join(disabled_on) +
           " (the agent's enabled_intents, or --enable-intent " + intent +
           "); use --force to submit anyway";
  }
  std::string best;
  size_t best_distance = std::max<size_t>(3, intent.size() / 3);  // close matches only
  for (const auto& o : offered) {
    size_t d = internal::EditDistance(intent, o);
    if (d < best_distance) best = o, best_distance = d;
  }
  std::string hint = best.empty() ? "" : "; did you mean " + internal::Quote(best) + "?";
  return "intent " + internal::Quote(intent) + " is not offered by " + where + " (they run: " +
         Join(offered) + ")" + hint + " Use --force to submit anyway";
}

}  // namespace

std::string DescribeSelector(const TargetSelector& s) {
  switch (s.type) {
    case SelectorType::kLabel: return "label " + s.key + "=" + s.value;
    case SelectorType::kGroup: return "group " + s.group;
    case SelectorType::kNodes: return "nodes";
  }
  return "selector";
}

Status SubmitTaskFile(const apollo::v1::SubmitTasksRequest& req, const SubmitOptions& options,
                      store::StateStore& store, TaskIdGenerator& ids,
                      apollo::v1::SubmitTasksResponse* resp,
                      std::vector<store::NewTask>* stored) {
  const bool typed = req.specs_size() > 0;
  if (typed && !req.content().empty()) {
    return Status::InvalidArgument(
        "SubmitTasks: set either content (a task file's text) or specs (typed tasks), not both");
  }
  const std::string file = req.file_name().empty() ? "<request>" : req.file_name();
  Status lookup_error;
  // Dependencies outside the file: one lookup per distinct id (the store
  // has no batch lookup; many tasks usually name the same few upstreams).
  std::map<std::string, bool, std::less<>> known_tasks;
  auto exists = [&](std::string_view id) {
    if (auto it = known_tasks.find(id); it != known_tasks.end()) return it->second;
    auto t = store.GetTask(id);
    if (!t.ok() && t.status().code() != StatusCode::kNotFound) lookup_error = t.status();
    known_tasks.emplace(std::string(id), t.ok());
    return t.ok();
  };
  // Typed specs skip YAML; both are checked by the same rules, and what
  // follows is the same for both.
  ParsedTasks parsed =
      typed ? TaskSpecsFromProto(req.specs(), file, ParseLimits{}, exists, options.presets)
            : ParseTaskFile(req.content(), file, ParseLimits{}, exists, options.presets);
  APOLLO_RETURN_IF_ERROR(lookup_error);
  for (const auto& d : parsed.errors) {
    AddError(resp, d.file, d.line, d.message, d.column, d.task_index);
  }
  if (!parsed.ok()) return Status::Ok();
  // Where a task's problem found here is shown: its intent's line:column in
  // a file; a typed spec has none (line 0: the client knows its task_index).
  auto intent_at = [&](size_t ti) {
    return ti < parsed.intent_at.size() ? parsed.intent_at[ti] : ParsedTasks::Position{0, 0};
  };
  const int task_line = typed ? 0 : 1;  // a task's problem without a better place

  // Resolved once per distinct selector and the registered nodes read once
  // per file, not per task: a file of 500 tasks is 500 selectors.
  std::map<std::string, std::vector<std::string>> resolved;
  std::optional<std::vector<store::NodeInfo>> node_list;
  std::map<std::string, const store::NodeInfo*> known;
  auto load_nodes = [&]() -> Status {
    if (node_list) return Status::Ok();
    auto r = store.ListNodes();
    if (!r.ok()) return r.status();
    node_list = std::move(*r);
    for (const auto& n : *node_list) known[n.node_id] = &n;
    return Status::Ok();
  };
  std::vector<store::NewTask> tasks;
  for (size_t ti = 0; ti < parsed.tasks.size(); ++ti) {
    TaskSpec& spec = parsed.tasks[ti];
    if (spec.task_id_generated) spec.task_id = ids.Generate(spec.intent);
    const TargetSelector& sel = spec.target_selector;
    std::vector<std::string> nodes_storage;
    const std::vector<std::string>* nodes = &sel.nodes;
    if (sel.type != SelectorType::kNodes) {
      std::string key = std::to_string(static_cast<int>(sel.type)) + '\n' + sel.key + '\n' +
                        sel.value + '\n' + sel.group;
      auto it = resolved.find(key);
      if (it == resolved.end()) {
        auto r = store.ResolveSelector(sel);
        if (!r.ok()) return r.status();
        it = resolved.emplace(std::move(key), std::move(*r)).first;
      }
      nodes = &it->second;
    } else {
      // kNodes resolves to the listed ids as given.
      auto r = store.ResolveSelector(sel);
      if (!r.ok()) return r.status();
      nodes_storage = std::move(*r);
      nodes = &nodes_storage;
    }
    const int index = static_cast<int>(ti);
    if (nodes->empty() && !spec.target_selector.allow_empty) {
      AddError(resp, file, task_line,
               "task '" + spec.task_id + "': target_selector (" +
                   DescribeSelector(spec.target_selector) +
                   ") matches no registered node; set allow_empty: true to accept that",
               task_line, index);
      continue;
    }
    APOLLO_RETURN_IF_ERROR(load_nodes());
    if (!req.force()) {
      if (std::string p = IntentProblem(spec.intent, *nodes, known); !p.empty()) {
        const auto at = intent_at(ti);
        AddError(resp, file, at.line, "task '" + spec.task_id + "': " + p, at.column, index);
        continue;
      }
    }
    if (spec.target_selector.type == SelectorType::kNodes) {
      for (const auto& n : *nodes) {
        auto it = known.find(n);
        if (it == known.end() || !it->second->registered) {
          resp->add_warnings("task '" + spec.task_id + "': node '" + n +
                             "' has never registered; its work waits (blocked_reason "
                             "node_not_registered)");
        }
      }
    }
    const auto start_timeout = spec.start_timeout.value_or(options.default_start_timeout);
    tasks.push_back(store::NewTask{spec, *nodes, start_timeout, {}, {}});
  }
  if (resp->errors_size() > 0) return Status::Ok();
  if (options.plan_dispatch && !req.dry_run()) {
    for (store::NewTask& t : tasks) options.plan_dispatch(t);
  }

  std::vector<store::CreatedTask> created;
  if (!req.dry_run()) {
    auto create = [&]() -> Result<std::vector<store::CreatedTask>> {
      if (!options.audit) return store.CreateTasks(tasks);
      store::AuditRow row = *options.audit;
      row.target.clear();
      for (const auto& t : tasks) {
        if (row.target.size() >= 512) break;
        row.target += (row.target.empty() ? "" : ",") + t.spec.task_id;
      }
      row.target.resize(std::min<size_t>(row.target.size(), 512));
      return store.CreateTasksAudited(tasks, row);
    };
    Result<std::vector<store::CreatedTask>> r = create();
    if (!r.ok()) {
      if (r.status().code() == StatusCode::kAlreadyExists) {
        AddError(resp, file, task_line, r.status().message(), task_line);
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
    const TargetSelector& sel = tasks[i].spec.target_selector;
    if (sel.type != SelectorType::kNodes) t->set_targeting(sel.follow ? "follow" : "static");
    if (tasks[i].spec.rollout) {
      // The store's plan: node_id order (core/rollout.h).
      std::set<std::string> sorted(tasks[i].node_ids.begin(), tasks[i].node_ids.end());
      std::vector<int> plan = PlanBatches(*tasks[i].spec.rollout, sorted.size());
      size_t k = 0;
      for (const std::string& n : sorted) {
        const int b = plan[k++];
        while (t->batches_size() < b) t->add_batches();
        t->mutable_batches(b - 1)->add_nodes(n);
      }
    }
  }
  if (stored && !req.dry_run()) {
    for (size_t i = 0; i < tasks.size(); ++i) {
      tasks[i].dispatch_now.clear();
      if (i < created.size()) tasks[i].dispatch_now = std::move(created[i].dispatched);
    }
    *stored = std::move(tasks);
  }
  return Status::Ok();
}

}  // namespace apollo::orchestrator
