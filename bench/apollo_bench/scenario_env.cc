#include "apollo_bench/scenario_env.h"

#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <filesystem>
#include <mutex>
#include <thread>

namespace apollo::bench {
namespace {

// StartSplitFleet: agents started and not connected yet, over the whole
// fleet (each process takes its share).
constexpr size_t kMaxConnecting = 256;

}  // namespace

void ChildPids::Add(pid_t pid) {
  std::lock_guard<std::mutex> lock(mu_);
  pids_.insert(pid);
}

void ChildPids::Remove(pid_t pid) {
  std::lock_guard<std::mutex> lock(mu_);
  pids_.erase(pid);
}

void ChildPids::AddDir(const std::string& dir) {
  std::lock_guard<std::mutex> lock(mu_);
  dirs_.insert(dir);
}

void ChildPids::RemoveDir(const std::string& dir) {
  std::lock_guard<std::mutex> lock(mu_);
  dirs_.erase(dir);
}

void ChildPids::KillAll() {
  std::lock_guard<std::mutex> lock(mu_);
  for (pid_t pid : pids_) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
  }
  std::error_code ec;
  for (const auto& dir : dirs_) std::filesystem::remove_all(dir, ec);
}

Result<std::unique_ptr<ScenarioEnv>> ScenarioEnv::Create(const BenchConfig& config,
                                                         const std::string& scenario,
                                                         const ScenarioEnvOptions& options) {
  std::unique_ptr<ScenarioEnv> env(new ScenarioEnv(config));
  auto dir = TempDir::Create(config.tmp_parent);
  if (!dir.ok()) return dir.status();
  env->dir_ = std::move(*dir);
  if (config.children) config.children->AddDir(env->dir());
  env->prefix_ = config.run_id + "-" + scenario;

  agent::HandlerConfig handlers;
  handlers.enabled_builtins = {"noop"};
  auto registry = agent::HandlerRegistry::Create(handlers);
  if (!registry.ok()) return registry.status();
  env->registry_ = std::move(*registry);

  if (!config.server.empty()) {
    env->address_ = config.server;
  } else {
    OrchestratorSpec spec;
    spec.binary = config.orchestrator_bin;
    spec.store_url =
        config.store_url.empty() ? "sqlite://" + env->dir() + "/apollo.db" : config.store_url;
    if (config.pg) {
      auto url = config.pg->NewDatabase();
      if (!url.ok()) return url.status();
      spec.store_url = *url;
    }
    env->store_url_ = spec.store_url;
    spec.log_path = env->dir() + "/orchestrator.log";
    spec.own_session = options.orchestrator_own_session;
    if (!config.orchestrator_config.empty()) spec.extra_args = {"--config", config.orchestrator_config};
    auto p = OrchestratorProcess::Start(spec, std::chrono::seconds(30));
    if (!p.ok()) return p.status();
    env->process_ = std::move(*p);
    if (config.children) config.children->Add(env->process_->pid());
    env->address_ = env->process_->address();
  }
  env->api_ = std::make_unique<ApiClient>(env->address_);
  return env;
}

ScenarioEnv::~ScenarioEnv() {
  if (process_) {
    if (config_.children) config_.children->Remove(process_->pid());
    process_->Terminate(std::chrono::seconds(10));
  }
  if (config_.children && dir_) config_.children->RemoveDir(dir_->path());
}

std::optional<double> ScenarioEnv::RssMb() const {
  if (!process_ || process_->pid() <= 0) return std::nullopt;
  return ProcessRssMb(process_->pid());
}

FleetOptions ScenarioEnv::MakeFleetOptions(size_t agents, int max_concurrency) const {
  FleetOptions o;
  o.agents = agents;
  o.orchestrator = address_;
  o.root_dir = dir();
  o.node_prefix = prefix_;
  o.max_concurrency = max_concurrency;
  o.labels = {{"role", "bench"}, {"bench_run", prefix_}};
  o.shared_connection = config_.shared_connection;
  return o;
}

Result<std::unique_ptr<Fleet>> ScenarioEnv::StartFleet(size_t agents, int max_concurrency) {
  return Fleet::Start(MakeFleetOptions(agents, max_concurrency), *registry_, clock_);
}

Status ScenarioEnv::CheckOrchestratorFds(size_t agents) const {
  if (!process_) return Status::Ok();
  // A connection per agent, plus a descriptor or so per stream and store.
  auto max_fds = ProcessMaxOpenFiles(process_->pid());
  const int64_t need = 2 * static_cast<int64_t>(agents);
  if (max_fds && *max_fds >= 0 && *max_fds < need) {
    return Status::FailedPrecondition("the orchestrator may open " + std::to_string(*max_fds) +
                                      " files, " + std::to_string(agents) + " agents need " +
                                      std::to_string(need));
  }
  return Status::Ok();
}

Status ScenarioEnv::WaitCenterConnected(size_t agents) {
  auto deadline = std::chrono::steady_clock::now() + config_.timeout;
  size_t center = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    auto n = api_->ConnectedNodes(prefix_ + "-");
    if (n.ok()) center = *n;
    if (center >= agents) return Status::Ok();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return Status::DeadlineExceeded("only " + std::to_string(center) + " of " +
                                  std::to_string(agents) + " agents connected in time");
}

Result<std::unique_ptr<Fleet>> ScenarioEnv::StartConnectedFleet(size_t agents) {
  if (const size_t per_process = MaxAgentsPerProcess(config_.shared_connection);
      agents > per_process) {
    return Status::FailedPrecondition(
        std::to_string(agents) + " agents do not fit in one bench process (at most " +
        std::to_string(per_process) +
        ", from RLIMIT_NOFILE); only idle and reconnect spread a fleet over several processes");
  }
  APOLLO_RETURN_IF_ERROR(
      CheckFleetCapacity(agents, config_.max_concurrency, config_.shared_connection));
  APOLLO_RETURN_IF_ERROR(CheckOrchestratorFds(agents));
  auto fleet = StartFleet(agents, config_.max_concurrency);
  if (!fleet.ok()) return fleet.status();
  APOLLO_RETURN_IF_ERROR(WaitCenterConnected(agents));
  return fleet;
}

Result<std::unique_ptr<SplitFleet>> ScenarioEnv::StartSplitFleet(size_t agents) {
  const size_t per_process = config_.fleet_per_process > 0
                                 ? config_.fleet_per_process
                                 : MaxAgentsPerProcess(config_.shared_connection);
  const size_t processes = std::max<size_t>(1, (agents + per_process - 1) / per_process);
  // Each process's own limits (the largest slice), the machine's threads.
  APOLLO_RETURN_IF_ERROR(
      CheckProcessCapacity((agents + processes - 1) / processes, 0, config_.shared_connection));
  APOLLO_RETURN_IF_ERROR(CheckMachineThreads(agents, processes, 0));
  APOLLO_RETURN_IF_ERROR(CheckOrchestratorFds(agents));
  FleetOptions o = MakeFleetOptions(agents, config_.max_concurrency);
  // Dialling at once, thousands of agents knock our orchestrator over
  // (FleetOptions::max_connecting); the storm of reconnect is measured
  // after the fleet is up.
  o.max_connecting = std::max<size_t>(1, kMaxConnecting / processes);
  o.start_timeout = config_.timeout;
  auto fleet =
      SplitFleet::Start(o, processes, *registry_, clock_, config_.timeout, config_.children);
  if (!fleet.ok()) return fleet.status();
  APOLLO_RETURN_IF_ERROR(WaitCenterConnected(agents));
  return fleet;
}

Status ScenarioEnv::RestartOrchestrator() {
  if (!process_) return Status::FailedPrecondition("not our orchestrator (--server)");
  if (config_.children) config_.children->Remove(process_->pid());
  Status s = process_->Restart(std::chrono::seconds(30));
  if (s.ok() && config_.children) config_.children->Add(process_->pid());
  return s;
}

void ScenarioEnv::KillOrchestrator() {
  if (!process_) return;
  if (config_.children) config_.children->Remove(process_->pid());
  process_->Kill();
}

namespace {

bool Retryable(const Status& s) {
  return s.code() == StatusCode::kUnavailable || s.code() == StatusCode::kResourceExhausted ||
         s.code() == StatusCode::kAborted;
}

}  // namespace

Status SubmitAll(ApiClient& api, const std::vector<apollo::v1::SubmitTasksRequest>& requests,
                 int submitters, std::chrono::steady_clock::time_point deadline,
                 std::vector<double>* call_ms, size_t* refused) {
  using Steady = std::chrono::steady_clock;
  std::atomic<size_t> next{0};
  std::mutex mu;
  Status first_error;
  std::vector<std::thread> threads;
  for (int t = 0; t < std::max(1, submitters); ++t) {
    threads.emplace_back([&] {
      for (size_t i = next++; i < requests.size(); i = next++) {
        for (;;) {
          auto start = Steady::now();
          auto r = api.Submit(requests[i]);
          double ms = std::chrono::duration<double, std::milli>(Steady::now() - start).count();
          {
            std::lock_guard<std::mutex> lock(mu);
            if (r.ok()) {
              if (call_ms) call_ms->push_back(ms);
              break;
            }
            if (!Retryable(r.status()) || Steady::now() > deadline) {
              if (first_error.ok()) first_error = r.status();
              next = requests.size();
              return;
            }
            if (refused) ++*refused;
          }
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  return first_error;
}

std::string NoopTaskFile(const std::string& prefix, size_t first,
                         const std::vector<std::string>& nodes) {
  std::string out = "tasks:\n";
  out.reserve(nodes.size() * 220);
  for (size_t i = 0; i < nodes.size(); ++i) {
    out += "  - {task_id: " + prefix + "-t" + std::to_string(first + i) +
           ", intent: noop, target_selector: {type: nodes, nodes: [" + nodes[i] +
           "]}, timeout: 60, retry_policy: {max_retries: 0, initial_interval: 1, "
           "max_interval: 1, backoff: fixed}}\n";
  }
  return out;
}

apollo::v1::SubmitTasksRequest NoopTasks(const BenchConfig& config, const std::string& prefix,
                                         size_t first, const std::vector<std::string>& nodes,
                                         const std::string& file_name) {
  apollo::v1::SubmitTasksRequest req;
  req.set_file_name(file_name);
  if (config.submit_yaml) {
    req.set_content(NoopTaskFile(prefix, first, nodes));
    return req;
  }
  for (size_t i = 0; i < nodes.size(); ++i) {
    apollo::v1::TaskSpec* t = req.add_specs();
    t->set_task_id(prefix + "-t" + std::to_string(first + i));
    t->set_intent("noop");
    t->mutable_target_selector()->set_type(apollo::v1::SELECTOR_TYPE_NODES);
    t->mutable_target_selector()->add_nodes(nodes[i]);
    t->set_timeout_s(60);
    apollo::v1::RetryPolicy* retry = t->mutable_retry_policy();
    retry->set_max_retries(0);
    retry->set_initial_interval_s(1);
    retry->set_max_interval_s(1);
    retry->set_backoff(apollo::v1::BACKOFF_FIXED);
  }
  return req;
}

std::string NoopLabelTaskFile(const std::string& task_id, const std::string& label) {
  return "task_id: " + task_id +
         "\nintent: noop\ntarget_selector: {type: label, key: bench_run, value: " + label +
         "}\ntimeout: 120\nretry_policy: {max_retries: 0, initial_interval: 1, max_interval: 1, "
         "backoff: fixed}\n";
}

}  // namespace apollo::bench
