#include "store/sqlite/schema.h"

#include <array>
#include <string>

namespace apollo::store::sqlite {
namespace {

constexpr const char* kSchemaV1 = R"sql(
CREATE TABLE meta(
  name  TEXT PRIMARY KEY,
  value INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO meta(name, value) VALUES ('next_hist_id', 1);

CREATE TABLE nodes(
  node_ref       INTEGER PRIMARY KEY,
  node_id        TEXT NOT NULL UNIQUE,
  registered     INTEGER NOT NULL,
  labels         TEXT NOT NULL DEFAULT '{}',
  groups_json    TEXT NOT NULL DEFAULT '[]',
  intents_json   TEXT NOT NULL DEFAULT '[]',
  mode           TEXT NOT NULL DEFAULT '',
  agent_version  TEXT NOT NULL DEFAULT '',
  last_heartbeat INTEGER,
  updated_at     INTEGER NOT NULL);

CREATE TABLE node_seq(
  node_ref INTEGER PRIMARY KEY,
  hwm      INTEGER NOT NULL);

CREATE TABLE seq_above(
  node_ref INTEGER NOT NULL,
  seq      INTEGER NOT NULL,
  at       INTEGER NOT NULL,
  PRIMARY KEY (node_ref, seq)) WITHOUT ROWID;

CREATE TABLE tasks(
  task_ref    INTEGER PRIMARY KEY,
  task_id     TEXT NOT NULL UNIQUE,
  intent      TEXT NOT NULL,
  status      INTEGER NOT NULL,
  node_count  INTEGER NOT NULL,
  priority    INTEGER NOT NULL,
  timeout_us  INTEGER NOT NULL,
  max_retries INTEGER NOT NULL,
  created_at  INTEGER NOT NULL,
  updated_at  INTEGER NOT NULL,
  settled_at  INTEGER);
CREATE INDEX tasks_by_status ON tasks(status, task_ref);
CREATE INDEX tasks_by_intent ON tasks(intent, task_ref);
CREATE INDEX tasks_by_created ON tasks(created_at);
CREATE INDEX tasks_settled ON tasks(settled_at) WHERE settled_at IS NOT NULL;

-- The canonical spec, apart: tasks rows are rewritten on every roll-up
-- change and stay narrow.
CREATE TABLE task_specs(
  task_ref INTEGER PRIMARY KEY,
  spec     TEXT NOT NULL);

CREATE TABLE task_deps(
  task_ref INTEGER NOT NULL,
  dep_ref  INTEGER NOT NULL,
  PRIMARY KEY (task_ref, dep_ref)) WITHOUT ROWID;
CREATE INDEX task_deps_rev ON task_deps(dep_ref, task_ref);

CREATE TABLE task_nodes(
  task_ref       INTEGER NOT NULL,
  node_ref       INTEGER NOT NULL,
  state          INTEGER NOT NULL,
  version        INTEGER NOT NULL,
  attempt        INTEGER NOT NULL,
  retries        INTEGER NOT NULL,
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL,
  due_kind       INTEGER NOT NULL,
  due_at         INTEGER,
  last_error     TEXT NOT NULL DEFAULT '',
  result         TEXT NOT NULL DEFAULT '',
  result_ref     INTEGER,
  blocked_reason TEXT NOT NULL DEFAULT '',
  PRIMARY KEY (task_ref, node_ref)) WITHOUT ROWID;
CREATE INDEX task_nodes_by_node ON task_nodes(node_ref, task_ref);
CREATE INDEX task_nodes_due ON task_nodes(due_at) WHERE due_at IS NOT NULL;

CREATE TABLE history(
  task_ref    INTEGER NOT NULL,
  hist_id     INTEGER NOT NULL,
  node_ref    INTEGER NOT NULL,
  cause       INTEGER NOT NULL,
  outcome     INTEGER NOT NULL,
  seq         INTEGER,
  event_type  INTEGER,
  attempt     INTEGER NOT NULL,
  from_state  INTEGER NOT NULL,
  to_state    INTEGER NOT NULL,
  version     INTEGER NOT NULL,
  at          INTEGER NOT NULL,
  detail      TEXT NOT NULL DEFAULT '',
  payload     TEXT NOT NULL DEFAULT '',
  payload_ref INTEGER,
  PRIMARY KEY (task_ref, hist_id)) WITHOUT ROWID;

CREATE TABLE payloads(
  payload_id INTEGER PRIMARY KEY,
  task_ref   INTEGER NOT NULL,
  body       TEXT NOT NULL);
CREATE INDEX payloads_by_task ON payloads(task_ref);

CREATE TABLE alerts(
  alert_id   INTEGER PRIMARY KEY,
  kind       TEXT NOT NULL,
  task_id    TEXT NOT NULL,
  node_id    TEXT NOT NULL,
  from_state INTEGER,
  to_state   INTEGER,
  event_id   TEXT NOT NULL,
  detail     TEXT NOT NULL,
  at         INTEGER NOT NULL);
CREATE INDEX alerts_by_time ON alerts(at);

CREATE TABLE dead_letters(
  letter_id  INTEGER PRIMARY KEY,
  event_json TEXT NOT NULL,
  reason     TEXT NOT NULL,
  deliveries INTEGER NOT NULL,
  parked_at  INTEGER NOT NULL);
)sql";

// kMigrations[i] upgrades version i to i + 1.
constexpr std::array<const char*, kSchemaVersion> kMigrations = {kSchemaV1};

Result<int> CurrentVersion(Db& db) {
  APOLLO_RETURN_IF_ERROR(
      db.Exec("CREATE TABLE IF NOT EXISTS schema_version(version INTEGER NOT NULL)"));
  Result<Stmt*> st = db.Prepare("SELECT max(version) FROM schema_version");
  if (!st.ok()) return st.status();
  StmtRef s(*st);
  Result<bool> row = s->Step();
  if (!row.ok()) return row.status();
  return (*row && !s->IsNull(0)) ? static_cast<int>(s->Int(0)) : 0;
}

}  // namespace

Status Migrate(Db& db) {
  APOLLO_RETURN_IF_ERROR(db.Exec("BEGIN IMMEDIATE"));
  Result<int> version = CurrentVersion(db);
  Status st = version.status();
  if (st.ok() && *version > kSchemaVersion) {
    st = Status::FailedPrecondition("database schema version " + std::to_string(*version) +
                                    " is newer than this binary's " +
                                    std::to_string(kSchemaVersion));
  }
  for (int v = st.ok() ? *version : kSchemaVersion; st.ok() && v < kSchemaVersion; ++v) {
    st = db.Exec(kMigrations[v]);
    if (st.ok()) {
      st = db.Exec("INSERT INTO schema_version(version) VALUES (" + std::to_string(v + 1) + ")");
    }
  }
  if (!st.ok()) {
    (void)db.Exec("ROLLBACK");
    return st.WithPrefix("migrating schema");
  }
  return db.Exec("COMMIT");
}

}  // namespace apollo::store::sqlite
