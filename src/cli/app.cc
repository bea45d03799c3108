#include "cli/app.h"

#include <CLI/CLI.hpp>
#include <cmath>
#include <exception>
#include <functional>
#include <string>

#include "cli/acl_command.h"
#include "cli/alert_command.h"
#include "cli/bus_command.h"
#include "cli/cluster_command.h"
#include "cli/command_result.h"
#include "cli/dlq_command.h"
#include "cli/global_options.h"
#include "cli/node_command.h"
#include "cli/orchestrator_client.h"
#include "cli/reconcile_command.h"
#include "cli/rpc_error.h"
#include "cli/store_command.h"
#include "cli/submit_command.h"
#include "cli/task_commands.h"
#include "cli/tls_command.h"
#include "cli/validate_command.h"
#include "cli/watch_command.h"
#include "core/build_info.h"
#include "core/clock.h"
#include "core/version.h"
#include "tls/cert_authority.h"
#include "tls/tls_files.h"

namespace apollo::cli {

namespace {

// Every option and the command chosen, filled in by CLI11.
struct Parsed {
  GlobalOptions global;
  ValidateOptions validate;
  SubmitOptions submit;
  TaskIdOptions task_id;
  ListOptions list;
  CancelOptions cancel;
  RolloutOptions rollout;
  DepsOptions deps;
  HoldOptions hold;
  WatchOptions watch;
  ReconcileOptions reconcile;
  DlqOptions dlq;
  AlertOptions alert;
  TlsOptions tls;
  TokenOptions token;
  AuditOptions audit;
  std::string sync_node;
  StoreCommandOptions store;
  // The chosen command, run after parsing succeeded.
  std::function<int(OrchestratorClient&, std::ostream&, std::ostream&)> command;
  bool offline = false;  // `task validate`: no client, no server
  // `tls ...`: also offline, run instead of `command`.
  std::function<int(std::ostream&, std::ostream&)> offline_command;
};

// A finite number of seconds, > 0 (or >= 0 with `allow_zero`). CLI11's own
// range checks let "nan" through.
CLI::Validator Seconds(bool allow_zero) {
  return CLI::Validator(
      [allow_zero](std::string& text) -> std::string {
        double v = 0;
        try {
          size_t used = 0;
          v = std::stod(text, &used);
          if (used != text.size()) return "not a number of seconds: " + text;
        } catch (const std::exception&) {
          return "not a number of seconds: " + text;
        }
        if (!std::isfinite(v) || v < 0 || (v == 0 && !allow_zero)) {
          return std::string("must be a ") + (allow_zero ? "non-negative" : "positive") +
                 " number of seconds: " + text;
        }
        return "";
      },
      "SECONDS");
}

// Makes `sub`, once parsed, select `run(p.global, opts, client, out, err)`.
template <typename Opts, typename RunFn>
void OnParsed(CLI::App* sub, Parsed& p, const Opts& opts, RunFn run) {
  sub->callback([&p, &opts, run] {
    p.command = [&p, &opts, run](OrchestratorClient& c, std::ostream& o, std::ostream& e) {
      return run(p.global, opts, c, o, e);
    };
  });
}

CLI::App* AddTaskIdCommand(CLI::App* task, const char* name, const char* help, std::string& id) {
  CLI::App* c = task->add_subcommand(name, help);
  c->add_option("--task-id,-t", id, "the task's id")->required();
  return c;
}

void AddTaskCommands(CLI::App* task, Parsed& p) {
  CLI::App* v = task->add_subcommand("validate", "check a task file offline (no server needed)");
  v->add_option("--file,-f", p.validate.file, "task file (YAML)")->required();
  v->callback([&p] { p.offline = true; });

  CLI::App* s = task->add_subcommand("submit", "validate a task file, then submit it");
  s->add_option("--file,-f", p.submit.file, "task file (YAML)")->required();
  s->add_flag("--dry-run", p.submit.dry_run, "validate and show the matched nodes; store nothing");
  s->add_flag("--force", p.submit.force,
              "accept an intent no matched node offers (e.g. nodes about to be upgraded)");
  OnParsed(s, p, p.submit, RunSubmit);

  OnParsed(AddTaskIdCommand(task, "status", "show a task's per-node state", p.task_id.task_id), p,
           p.task_id, RunStatus);
  OnParsed(
      AddTaskIdCommand(task, "retry", "retry a task's FAILED/TIMEOUT nodes", p.task_id.task_id), p,
      p.task_id, RunRetry);
  OnParsed(AddTaskIdCommand(task, "events", "show a task's ordered history", p.task_id.task_id), p,
           p.task_id, RunEvents);

  CLI::App* c = AddTaskIdCommand(task, "cancel", "cancel a task on every node", p.cancel.task_id);
  c->add_option("--reason", p.cancel.reason, "why, recorded in the history");
  OnParsed(c, p, p.cancel, RunCancel);

  // A rollout's controls: one command each, the same options.
  const std::pair<const char*, const char*> controls[] = {
      {"pause", "pause a task's rollout: no new batch starts"},
      {"resume", "resume a paused rollout (after a breached budget: accept its failures)"},
      {"approve", "approve a rollout's canary: its next batch starts"},
      {"abort", "abort a rollout: cancel what has not started, roll back what changed"}};
  for (const auto& [name, help] : controls) {
    CLI::App* r = AddTaskIdCommand(task, name, help, p.rollout.task_id);
    r->add_option("--reason", p.rollout.reason, "why, recorded in the history with who");
    const std::string action = name;
    r->callback([&p, action] {
      p.rollout.action = action;
      p.command = [&p](OrchestratorClient& c, std::ostream& o, std::ostream& e) {
        return RunRollout(p.global, p.rollout, c, o, e);
      };
    });
  }

  CLI::App* d = AddTaskIdCommand(task, "deps", "before a task starts: add or remove dependencies",
                                 p.deps.task_id);
  d->add_option("--add", p.deps.add, "a task it must wait for (repeatable)");
  d->add_option("--remove", p.deps.remove, "a dependency to drop (repeatable)");
  d->add_option("--reason", p.deps.reason, "why, recorded in the history with who");
  OnParsed(d, p, p.deps, RunDeps);
  CLI::App* h =
      AddTaskIdCommand(task, "hold", "hold a task's nodes that have not started", p.hold.task_id);
  h->add_option("--reason", p.hold.reason, "why, recorded in the history with who");
  OnParsed(h, p, p.hold, RunHold);
  CLI::App* rl = AddTaskIdCommand(task, "release", "release a held task", p.hold.task_id);
  rl->add_option("--reason", p.hold.reason, "why, recorded in the history with who");
  rl->callback([&p] {
    p.hold.release = true;
    p.command = [&p](OrchestratorClient& c, std::ostream& o, std::ostream& e) {
      return RunHold(p.global, p.hold, c, o, e);
    };
  });

  CLI::App* w = AddTaskIdCommand(task, "watch", "follow a task until it is final", p.watch.task_id);
  w->add_option("--for", p.watch.max_wait_s, "give up after this many seconds (0: never)")
      ->check(Seconds(/*allow_zero=*/true));
  OnParsed(w, p, p.watch, RunWatch);

  CLI::App* l = task->add_subcommand("list", "list tasks");
  l->add_option("--status", p.list.status, "only tasks with this roll-up status");
  l->add_option("--intent", p.list.intent, "only tasks with this intent");
  l->add_option("--meta", p.list.meta,
                "only tasks whose metadata has key=value (repeatable, all must match)");
  l->add_option("--limit", p.list.limit, "at most this many (0: the server's default)")
      ->check(CLI::NonNegativeNumber);
  l->add_option("--page-token", p.list.page_token, "continue a previous list");
  OnParsed(l, p, p.list, RunList);
}

// `dlq list|show|replay|drop` and `bus status` (issue 7).
void AddBusCommands(CLI::App& app, Parsed& p) {
  CLI::App* dlq = app.add_subcommand("dlq", "the event bus's dead-letter queue");
  dlq->require_subcommand(1);
  CLI::App* l = dlq->add_subcommand("list", "list parked events, oldest first");
  l->add_option("--after", p.dlq.after, "only letters with a larger id (paging)")
      ->check(CLI::NonNegativeNumber);
  l->add_option("--limit", p.dlq.limit, "at most this many (0: the server's default)")
      ->check(CLI::NonNegativeNumber);
  OnParsed(l, p, p.dlq, RunDlqList);
  CLI::App* s = dlq->add_subcommand("show", "show one letter and its event");
  s->add_option("id", p.dlq.id, "the letter's id (see dlq list)")
      ->required()
      ->check(CLI::PositiveNumber);
  OnParsed(s, p, p.dlq, RunDlqShow);
  CLI::App* r = dlq->add_subcommand("replay", "apply a letter (or --all) after fixing the cause");
  r->add_option("id", p.dlq.id, "the letter's id")->check(CLI::PositiveNumber);
  r->add_flag("--all", p.dlq.all, "every letter; the ones still failing stay");
  OnParsed(r, p, p.dlq, RunDlqReplay);
  CLI::App* d = dlq->add_subcommand("drop", "give up on a letter: its event is recorded as is");
  d->add_option("id", p.dlq.id, "the letter's id")->required()->check(CLI::PositiveNumber);
  OnParsed(d, p, p.dlq, RunDlqDrop);

  CLI::App* bus = app.add_subcommand("bus", "the event bus");
  bus->require_subcommand(1);
  bus->add_subcommand("status", "consumer lag per partition and dead letters")->callback([&p] {
    p.command = [&p](OrchestratorClient& c, std::ostream& o, std::ostream& e) {
      return RunBusStatus(p.global, c, o, e);
    };
  });
}

// `cluster status`: the orchestrator replicas and the leader lease
// (docs/replicas.md).
void AddClusterCommands(CLI::App& app, Parsed& p) {
  CLI::App* cluster = app.add_subcommand("cluster", "the orchestrator replicas sharing the store");
  cluster->require_subcommand(1);
  cluster->add_subcommand("status", "replicas, their roles and the leader lease")->callback([&p] {
    p.command = [&p](OrchestratorClient& c, std::ostream& o, std::ostream& e) {
      return RunClusterStatus(p.global, c, o, e);
    };
  });
}

// `alert list`: the store's alerts, for the operator.
void AddAlertCommands(CLI::App& app, Parsed& p) {
  CLI::App* alert = app.add_subcommand("alert", "alerts the orchestrator raised");
  alert->require_subcommand(1);
  CLI::App* l = alert->add_subcommand("list", "list alerts, oldest first");
  l->add_option("--kind", p.alert.kind, "only this kind (e.g. circuit_open, queue_alert)");
  l->add_option("--node", p.alert.node_id, "only alerts about this node");
  l->add_option("--after", p.alert.after, "only alerts with a larger id (paging)")
      ->check(CLI::NonNegativeNumber);
  l->add_option("--limit", p.alert.limit, "at most this many (0: the server's default)")
      ->check(CLI::NonNegativeNumber);
  OnParsed(l, p, p.alert, RunAlertList);
}

// `acl bootstrap`, `token create|list|revoke`, `audit list`.
void AddAclCommands(CLI::App& app, Parsed& p) {
  CLI::App* acl = app.add_subcommand("acl", "operator tokens: make the first one");
  acl->require_subcommand(1);
  CLI::App* b = acl->add_subcommand(
      "bootstrap", "make the first admin token (works once, while no token exists)");
  b->add_option("--name", p.token.name, "the token's name (default admin)");
  OnParsed(b, p, p.token, RunAclBootstrap);

  CLI::App* token = app.add_subcommand("token", "operator tokens (admin)");
  token->require_subcommand(1);
  CLI::App* c = token->add_subcommand("create", "make a token; it is printed once");
  c->add_option("--name", p.token.name, "a unique name (letters, digits, . _ -)")->required();
  c->add_option("--role", p.token.role, "viewer, operator or admin")
      ->required()
      ->check(CLI::IsMember({"viewer", "operator", "admin"}));
  c->add_option("--ttl", p.token.ttl, "expires after this long (3600, 12h, 30d; default never)");
  OnParsed(c, p, p.token, RunTokenCreate);
  OnParsed(token->add_subcommand("list", "list tokens (never the tokens themselves)"), p, p.token,
           RunTokenList);
  CLI::App* r = token->add_subcommand("revoke", "refuse a token from now on");
  r->add_option("--name", p.token.name, "the token's name")->required();
  OnParsed(r, p, p.token, RunTokenRevoke);

  CLI::App* audit = app.add_subcommand("audit", "the audit trail of operator calls (admin)");
  audit->require_subcommand(1);
  CLI::App* l = audit->add_subcommand("list", "mutating calls, oldest first");
  l->add_option("--who", p.audit.who, "only calls made with this token name");
  l->add_option("--since", p.audit.since, "only calls since a UTC time or a duration ago (2h)");
  l->add_option("--after", p.audit.after, "only entries with a larger id (paging)")
      ->check(CLI::NonNegativeNumber);
  l->add_option("--limit", p.audit.limit, "at most this many (0: the server's default)")
      ->check(CLI::NonNegativeNumber);
  OnParsed(l, p, p.audit, RunAuditList);
}

// `store backup` (an RPC) and `store restore` (offline): store/sqlite/backup.h.
void AddStoreCommands(CLI::App& app, Parsed& p) {
  CLI::App* store = app.add_subcommand("store", "back up the store, restore a backup");
  store->require_subcommand(1);
  CLI::App* b = store->add_subcommand("backup", "copy the running orchestrator's store (admin)");
  b->add_option("--out", p.store.out, "the file to write (must not exist)")->required();
  b->callback([&p] {
    p.command = [&p](OrchestratorClient& c, std::ostream& o, std::ostream& e) {
      return RunStoreBackup(p.global, p.store, c, o, e);
    };
  });
  CLI::App* r = store->add_subcommand(
      "restore", "put a backup in place of a stopped orchestrator's SQLite store (offline)");
  r->add_option("--from", p.store.from, "the backup file")->required();
  r->add_option("--store", p.store.store_url, "the store: sqlite://PATH")->required();
  r->add_flag("--force", p.store.force, "replace an existing store");
  r->callback([&p] {
    p.offline_command = [&p](std::ostream& o, std::ostream& e) {
      return RunStoreRestore(p.global, p.store, o, e);
    };
  });
}

// `tls ca create` and `tls cert create`: the fleet's certificates, offline.
void AddTlsCommands(CLI::App& app, Parsed& p) {
  CLI::App* tls = app.add_subcommand("tls", "make the fleet's TLS certificates (offline)");
  tls->require_subcommand(1);
  auto common = [&p](CLI::App* c) {
    c->add_option("--dir", p.tls.dir, "directory of the CA and the certificates")->required();
    c->add_option("--days", p.tls.days, "validity in days (CA: 1825, certificates: 365)")
        ->check(CLI::Range(1, tls::kMaxDays));
    c->add_flag("--force", p.tls.force, "replace existing files");
  };
  auto run = [&p](int (*fn)(const TlsOptions&, TimePoint, std::ostream&, std::ostream&)) {
    return [&p, fn] {
      p.offline_command = [&p, fn](std::ostream& o, std::ostream& e) {
        p.tls.output = p.global.output;
        return fn(p.tls, RealClock().Now(), o, e);
      };
    };
  };
  CLI::App* ca = tls->add_subcommand("ca", "the certificate authority");
  ca->require_subcommand(1);
  CLI::App* ca_create = ca->add_subcommand("create", "make DIR/ca.pem and DIR/ca-key.pem");
  common(ca_create);
  ca_create->callback(run(RunTlsCaCreate));

  CLI::App* cert = tls->add_subcommand("cert", "certificates signed by the CA in --dir");
  cert->require_subcommand(1);
  CLI::App* create = cert->add_subcommand(
      "create", "make DIR/NAME.pem and DIR/NAME-key.pem: --server, --node ID or --client");
  common(create);
  create->add_flag("--server", p.tls.server, "the orchestrator's certificate (NAME: server)");
  create->add_option("--node", p.tls.node,
                     "an agent's certificate, bound to this node id (NAME: the node id)");
  create->add_flag("--client", p.tls.client, "an operator's certificate for apollo-cli");
  create->add_option("--name", p.tls.name, "file base name (required with --client)");
  create->add_option("--host", p.tls.hosts,
                     "a DNS name or IP the orchestrator is dialled at (repeatable; "
                     "default localhost, 127.0.0.1)");
  create->callback(run(RunTlsCertCreate));
}

void AddGlobalOptions(CLI::App& app, Parsed& p) {
  app.add_option("--server", p.global.server,
                 "orchestrator address host:port, or each replica's separated by commas, tried in "
                 "order (default $APOLLO_SERVER, else 127.0.0.1:7011)");
  app.add_option("--output,-o", p.global.output, "text or json")
      ->check(CLI::IsMember({"text", "json"}));
  app.add_option("--timeout", p.global.timeout_s, "RPC deadline in seconds (default 10)")
      ->check(Seconds(/*allow_zero=*/false));
  app.add_option("--tls-ca", p.global.tls_ca,
                 "CA certificate the orchestrator's must chain to (default $APOLLO_TLS_CA)");
  app.add_option("--tls-cert", p.global.tls_cert,
                 "this operator's certificate (default $APOLLO_TLS_CERT)");
  app.add_option("--tls-key", p.global.tls_key,
                 "the private key of --tls-cert (default $APOLLO_TLS_KEY)");
  app.add_option("--token", p.global.token,
                 "operator token, when the orchestrator requires one (default $APOLLO_TOKEN)");
}

// The TLS files the global options name, read and checked; nullopt without
// TLS. A usage problem (some but not all three) is reported as kExitUsage.
std::optional<tls::TlsMaterial> ClientTls(const GlobalOptions& g, std::ostream& err, int* code) {
  tls::TlsPaths paths{g.tls_cert, g.tls_key, g.tls_ca};
  if (!paths.any()) return std::nullopt;
  if (!paths.complete()) {
    std::string missing;
    for (std::string_view m : paths.Missing()) {
      missing += (missing.empty() ? "--tls-" : ", --tls-") + std::string(m);
    }
    err << "apollo-cli: TLS needs --tls-ca, --tls-cert and --tls-key together (or $APOLLO_TLS_CA, "
           "$APOLLO_TLS_CERT, $APOLLO_TLS_KEY); missing: "
        << missing << "\n";
    *code = kExitUsage;
    return std::nullopt;
  }
  auto m = tls::LoadTlsMaterial(paths, RealClock().Now());
  if (!m.ok()) {
    *code = ReportError(m.status(), err);
    return std::nullopt;
  }
  return *m;
}

int Run(const std::vector<std::string>& args, const CliEnv& env, std::ostream& out,
        std::ostream& err) {
  Parsed p;
  if (env.apollo_server && !env.apollo_server->empty()) p.global.server = *env.apollo_server;
  if (env.apollo_tls_ca) p.global.tls_ca = *env.apollo_tls_ca;
  if (env.apollo_tls_cert) p.global.tls_cert = *env.apollo_tls_cert;
  if (env.apollo_tls_key) p.global.tls_key = *env.apollo_tls_key;
  if (env.apollo_token) p.global.token = *env.apollo_token;

  CLI::App app{"apollo-cli: operate an Apollo-11 fleet"};
  app.set_version_flag("--version", apollo::VersionLine("apollo-cli"));
  app.require_subcommand(1);
  // Global options are accepted after the subcommand too ("task status -o json").
  app.fallthrough();
  AddGlobalOptions(app, p);

  CLI::App* task = app.add_subcommand("task", "submit, inspect and validate tasks");
  task->require_subcommand(1);
  AddTaskCommands(task, p);
  CLI::App* node = app.add_subcommand("node", "inspect the fleet");
  node->require_subcommand(1);
  node->add_subcommand("list", "list every known node")->callback([&p] {
    p.command = [&p](OrchestratorClient& c, std::ostream& o, std::ostream& e) {
      return RunNodeList(p.global, c, o, e);
    };
  });
  CLI::App* sync = node->add_subcommand("sync", "ask an agent for a snapshot now (reconciles)");
  sync->add_option("--node-id,-n", p.sync_node, "the node's id")->required();
  sync->callback([&p] {
    p.command = [&p](OrchestratorClient& c, std::ostream& o, std::ostream& e) {
      return RunNodeSync(p.global, p.sync_node, c, o, e);
    };
  });
  AddStoreCommands(app, p);
  CLI::App* intent = app.add_subcommand("intent", "circuit breakers per intent, queue, retry budget");
  intent->require_subcommand(1);
  intent->add_subcommand("list", "show every intent's circuit breaker")->callback([&p] {
    p.command = [&p](OrchestratorClient& c, std::ostream& o, std::ostream& e) {
      return RunIntentList(p.global, c, o, e);
    };
  });
  CLI::App* rec = app.add_subcommand("reconcile", "compare agents' snapshots with the store");
  rec->add_option("--node-id,-n", p.reconcile.node_id, "one node (default: every node)");
  rec->add_flag("--dry-run", p.reconcile.dry_run, "show the drift; repair nothing");
  rec->callback([&p] {
    p.command = [&p](OrchestratorClient& c, std::ostream& o, std::ostream& e) {
      return RunReconcile(p.global, p.reconcile, c, o, e);
    };
  });

  AddBusCommands(app, p);
  AddClusterCommands(app, p);
  AddAlertCommands(app, p);
  AddAclCommands(app, p);
  AddTlsCommands(app, p);

  std::vector<const char*> argv;
  for (const auto& a : args) argv.push_back(a.c_str());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e, out, err);  // --help, --version
    err << "apollo-cli: " << OneLine(e.what()) << "\n";
    return kExitUsage;
  }
  if (p.offline) {
    p.validate.output = p.global.output;
    return RunValidate(p.validate, out, err);
  }
  if (p.offline_command) return p.offline_command(out, err);
  if (!p.command) {
    err << "apollo-cli: no command given (see --help)\n";
    return kExitUsage;
  }
  if (p.global.server.empty()) {
    err << "apollo-cli: --server: empty address\n";
    return kExitUsage;
  }
  for (const std::string& s : SplitServers(p.global.server)) {
    if (s.empty()) {
      err << "apollo-cli: --server: empty address in '" << OneLine(p.global.server)
          << "' (separate replicas' addresses with single commas)\n";
      return kExitUsage;
    }
  }
  int code = kExitOk;
  std::optional<tls::TlsMaterial> tls_files = ClientTls(p.global, err, &code);
  if (code != kExitOk) return code;
  OrchestratorClient client(p.global.server, p.global.timeout_s, tls_files);
  client.set_token(p.global.token);
  return p.command(client, out, err);
}

}  // namespace

int RunCli(const std::vector<std::string>& args, const CliEnv& env, std::ostream& out,
           std::ostream& err) {
  // Nothing below throws by design; this is the last line of defence so a
  // bug is still one line and an exit code, never an abort.
  try {
    return Run(args, env, out, err);
  } catch (const std::exception& e) {
    err << "apollo-cli: internal error: " << OneLine(e.what()) << "\n";
  } catch (...) {
    err << "apollo-cli: internal error\n";
  }
  return kExitFailure;
}

}  // namespace apollo::cli
