#include "store/engine/schema.h"

#include <array>

#include "store/engine/sql_text.h"

namespace apollo::store::engine {
namespace {

// Times are integer microseconds since the Unix epoch (the store's clock);
// states, causes and outcomes are the integer values of the C++ enums.
constexpr std::string_view kTables = R"sql(
CREATE TABLE IF NOT EXISTS nodes(
  node_ref       @id,
  node_id        TEXT NOT NULL UNIQUE,
  registered     BOOLEAN NOT NULL,
  labels         TEXT NOT NULL DEFAULT '{}',
  groups_json    TEXT NOT NULL DEFAULT '[]',
  intents_json   TEXT NOT NULL DEFAULT '[]',
  disabled_json  TEXT NOT NULL DEFAULT '[]',
  mode           TEXT NOT NULL DEFAULT '',
  agent_version  TEXT NOT NULL DEFAULT '',
  last_heartbeat BIGINT,
  updated_at     BIGINT NOT NULL);

-- Per node: every seq <= hwm is stored. Writers lock this row (FOR UPDATE)
-- while they deduplicate the node's events, so two never both apply one.
CREATE TABLE IF NOT EXISTS node_seq(
  node_ref @pk,
  hwm      BIGINT NOT NULL,
  n_above  INTEGER NOT NULL DEFAULT 0);  -- rows in seq_above (0: skip reading it)

-- Seqs stored above a gap in the node's sequence, until the gap closes.
CREATE TABLE IF NOT EXISTS seq_above(
  node_ref BIGINT NOT NULL,
  seq      BIGINT NOT NULL,
  at       BIGINT NOT NULL,
  PRIMARY KEY (node_ref, seq)) @clustered;

-- What a task is; never updated after creation. The hot path only maps a
-- task_id to its task_ref here (the task_id index covers it).
CREATE TABLE IF NOT EXISTS tasks(
  task_ref    @id,
  task_id     TEXT NOT NULL UNIQUE,
  intent      TEXT NOT NULL,
  spec        TEXT NOT NULL,
  priority    INTEGER NOT NULL,
  created_at  BIGINT NOT NULL);
CREATE INDEX IF NOT EXISTS tasks_by_intent ON tasks(intent, task_ref);
CREATE INDEX IF NOT EXISTS tasks_by_created ON tasks(created_at);

-- Where a task is (the roll-up of its nodes' states) and what every event
-- of it needs to know, in one narrow row: the hot path rewrites this, not
-- the spec.
CREATE TABLE IF NOT EXISTS task_status(
  task_ref    @pk,
  status      INTEGER NOT NULL,
  updated_at  BIGINT NOT NULL,
  settled_at  BIGINT,
  timeout_us  BIGINT NOT NULL,
  max_retries INTEGER NOT NULL,
  node_count  INTEGER NOT NULL,
  dependents  INTEGER NOT NULL DEFAULT 0,   -- tasks depending on this one
  start_timeout_us BIGINT NOT NULL DEFAULT 0,  -- 0: no schedule-to-start deadline
  compensate  BOOLEAN NOT NULL DEFAULT false,  -- the spec has on_failure
  -- Gates on its PENDING rows: rows of a rollout batch above open_batch
  -- wait (rows of a task without a rollout are all batch 0), and so does
  -- every row while an operator holds the task.
  open_batch  INTEGER NOT NULL DEFAULT 0,
  held_by     TEXT NOT NULL DEFAULT '',
  follow      BOOLEAN NOT NULL DEFAULT false); -- nodes matching later get it too
CREATE INDEX IF NOT EXISTS task_status_by_status ON task_status(status, task_ref);
CREATE INDEX IF NOT EXISTS task_status_settled ON task_status(settled_at)
  WHERE settled_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS task_status_follow ON task_status(task_ref) WHERE follow;

-- A rollout's progress (core/rollout.h); its open batch is task_status's.
CREATE TABLE IF NOT EXISTS rollouts(
  task_ref   @pk,
  state      INTEGER NOT NULL,  -- RolloutState
  batches    INTEGER NOT NULL,
  paused_by  TEXT NOT NULL DEFAULT '',
  reason     TEXT NOT NULL DEFAULT '',
  next_at    BIGINT,            -- waiting: when the next batch opens
  tolerated  INTEGER NOT NULL DEFAULT 0,  -- failures accepted by a resume
  version    BIGINT NOT NULL,
  updated_at BIGINT NOT NULL);
CREATE INDEX IF NOT EXISTS rollouts_active ON rollouts(task_ref) WHERE state < 5;

CREATE TABLE IF NOT EXISTS task_deps(
  task_ref BIGINT NOT NULL,
  dep_ref  BIGINT NOT NULL,
  PRIMARY KEY (task_ref, dep_ref)) @clustered;
CREATE INDEX IF NOT EXISTS task_deps_rev ON task_deps(dep_ref, task_ref);

-- One row per (task, node): the state machine. Writes are compare-and-set
-- on version (+1 per change).
CREATE TABLE IF NOT EXISTS task_nodes(
  task_ref       BIGINT NOT NULL,
  node_ref       BIGINT NOT NULL,
  state          INTEGER NOT NULL,
  version        BIGINT NOT NULL,
  attempt        BIGINT NOT NULL,
  retries        INTEGER NOT NULL,
  created_at     BIGINT NOT NULL,
  updated_at     BIGINT NOT NULL,
  due_kind       INTEGER NOT NULL,
  due_at         BIGINT,
  last_error     TEXT NOT NULL DEFAULT '',
  result         TEXT NOT NULL DEFAULT '',
  result_ref     BIGINT,
  blocked_reason TEXT NOT NULL DEFAULT '',
  start_deadline BIGINT,                      -- must be RUNNING by then
  extensions     INTEGER NOT NULL DEFAULT 0,  -- execution timeouts extended
  permanent      BOOLEAN NOT NULL DEFAULT false,  -- failed for good: no retry
  priority       INTEGER NOT NULL DEFAULT 1,  -- the task's, for due work
  batch          INTEGER NOT NULL DEFAULT 0,  -- its rollout batch (0: none)
  PRIMARY KEY (task_ref, node_ref)) @clustered;
CREATE INDEX IF NOT EXISTS task_nodes_by_node ON task_nodes(node_ref, task_ref);
CREATE INDEX IF NOT EXISTS task_nodes_due ON task_nodes(priority, due_at)
  WHERE due_at IS NOT NULL;
-- The dispatch queue (PENDING, DISPATCHED, RETRYING: TaskState 0, 1, 5):
-- its depth is counted every second, and settled rows stay for days.
CREATE INDEX IF NOT EXISTS task_nodes_queued ON task_nodes(state)
  WHERE state IN (0, 1, 5);

-- Every change with its cause, in hist_id order (sequence hist_ids).
CREATE TABLE IF NOT EXISTS history(
  task_ref    BIGINT NOT NULL,
  hist_id     BIGINT NOT NULL,
  node_ref    BIGINT NOT NULL,
  cause       INTEGER NOT NULL,
  outcome     INTEGER NOT NULL,
  seq         BIGINT,
  event_type  INTEGER,
  attempt     BIGINT NOT NULL,
  from_state  INTEGER NOT NULL,
  to_state    INTEGER NOT NULL,
  version     BIGINT NOT NULL,
  at          BIGINT NOT NULL,
  detail      TEXT NOT NULL DEFAULT '',
  payload     TEXT NOT NULL DEFAULT '',
  payload_ref BIGINT,
  epoch       BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (task_ref, hist_id)) @clustered;

-- Payloads over 1 KiB, kept out of the hot rows.
CREATE TABLE IF NOT EXISTS payloads(
  payload_id @id,
  task_ref   BIGINT NOT NULL,
  body       TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS payloads_by_task ON payloads(task_ref);

CREATE TABLE IF NOT EXISTS alerts(
  alert_id   @id,
  kind       TEXT NOT NULL,
  task_id    TEXT NOT NULL,
  node_id    TEXT NOT NULL,
  from_state INTEGER,
  to_state   INTEGER,
  event_id   TEXT NOT NULL,
  detail     TEXT NOT NULL,
  at         BIGINT NOT NULL,
  delivery   INTEGER NOT NULL DEFAULT 0,  -- AlertDelivery: webhook
  attempts   INTEGER NOT NULL DEFAULT 0,
  delivery_detail  TEXT NOT NULL DEFAULT '',
  next_delivery_at BIGINT);
CREATE INDEX IF NOT EXISTS alerts_by_time ON alerts(at);
CREATE INDEX IF NOT EXISTS alerts_to_deliver ON alerts(alert_id) WHERE delivery IN (0, 2);

CREATE TABLE IF NOT EXISTS dead_letters(
  letter_id  @id,
  event_json TEXT NOT NULL,
  reason     TEXT NOT NULL,
  deliveries INTEGER NOT NULL,
  parked_at  BIGINT NOT NULL);

-- Operator tokens: only a hash of each is kept.
CREATE TABLE IF NOT EXISTS tokens(
  token_ref  @id,
  name       TEXT NOT NULL UNIQUE,
  role       TEXT NOT NULL,
  hash       TEXT NOT NULL UNIQUE,
  created_at BIGINT NOT NULL,
  expires_at BIGINT,
  revoked_at BIGINT,
  created_by TEXT NOT NULL DEFAULT '');

-- Every mutating operator call: who, what, on what, from where, outcome.
CREATE TABLE IF NOT EXISTS audit(
  audit_id    @id,
  at          BIGINT NOT NULL,
  who         TEXT NOT NULL,
  action      TEXT NOT NULL,
  target      TEXT NOT NULL DEFAULT '',
  args_digest TEXT NOT NULL DEFAULT '',
  peer        TEXT NOT NULL DEFAULT '',
  outcome     TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS audit_by_time ON audit(at);

-- Orchestrator replicas (lease.h): each lease's holder and epoch (+1 at
-- every acquisition; fenced writes check it), and every replica as last seen.
CREATE TABLE IF NOT EXISTS leases(
  name        TEXT PRIMARY KEY,
  holder      TEXT NOT NULL,
  address     TEXT NOT NULL,
  epoch       BIGINT NOT NULL,
  acquired_at BIGINT NOT NULL,
  renewed_at  BIGINT NOT NULL,
  expires_at  BIGINT NOT NULL);
CREATE TABLE IF NOT EXISTS replicas(
  replica_id  TEXT PRIMARY KEY,
  address     TEXT NOT NULL,
  started_at  BIGINT NOT NULL,
  seen_at     BIGINT NOT NULL);

-- Sequences: PostgreSQL's own; SQLite counts in a table (its driver's
-- nextval(), read under the write lock).
/*@pg CREATE SEQUENCE IF NOT EXISTS hist_ids;*/
/*@sqlite CREATE TABLE IF NOT EXISTS sequences(
  name  TEXT PRIMARY KEY,
  value BIGINT NOT NULL) WITHOUT ROWID;
INSERT INTO sequences(name, value) VALUES ('hist_ids', 0) ON CONFLICT DO NOTHING;*/
)sql";

// Schema 1 -> 2: the embedded and the PostgreSQL stores become one engine.
// Frozen: schema 1 had a layout per dialect, so this step has one too.
constexpr std::string_view kToV2 = R"sql(
/*@pg
ALTER TABLE task_status ADD COLUMN timeout_us BIGINT NOT NULL DEFAULT 0,
  ADD COLUMN max_retries INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN node_count INTEGER NOT NULL DEFAULT 0,
  ADD COLUMN dependents INTEGER NOT NULL DEFAULT 0;
UPDATE task_status s SET timeout_us = t.timeout_us, max_retries = t.max_retries,
  node_count = (SELECT count(*) FROM task_nodes n WHERE n.task_ref = s.task_ref),
  dependents = (SELECT count(*) FROM task_deps d WHERE d.dep_ref = s.task_ref)
  FROM tasks t WHERE t.task_ref = s.task_ref;
ALTER TABLE tasks DROP COLUMN timeout_us, DROP COLUMN max_retries;
ALTER TABLE history ALTER COLUMN hist_id DROP IDENTITY IF EXISTS;
CREATE SEQUENCE IF NOT EXISTS hist_ids;
SELECT setval('hist_ids', (SELECT COALESCE(max(hist_id), 0) + 1 FROM history), false);
*/
/*@sqlite
DROP INDEX tasks_by_status;
DROP INDEX tasks_by_intent;
DROP INDEX tasks_by_created;
DROP INDEX tasks_settled;
ALTER TABLE tasks RENAME TO tasks_v1;
CREATE TABLE tasks(
  task_ref    INTEGER PRIMARY KEY,
  task_id     TEXT NOT NULL UNIQUE,
  intent      TEXT NOT NULL,
  spec        TEXT NOT NULL,
  priority    INTEGER NOT NULL,
  created_at  BIGINT NOT NULL);
INSERT INTO tasks SELECT t.task_ref, t.task_id, t.intent, s.spec, t.priority, t.created_at
  FROM tasks_v1 t JOIN task_specs s USING (task_ref);
CREATE INDEX tasks_by_intent ON tasks(intent, task_ref);
CREATE INDEX tasks_by_created ON tasks(created_at);
CREATE TABLE task_status(
  task_ref    INTEGER PRIMARY KEY,
  status      INTEGER NOT NULL,
  updated_at  BIGINT NOT NULL,
  settled_at  BIGINT,
  timeout_us  BIGINT NOT NULL,
  max_retries INTEGER NOT NULL,
  node_count  INTEGER NOT NULL,
  dependents  INTEGER NOT NULL DEFAULT 0);
INSERT INTO task_status SELECT task_ref, status, updated_at, settled_at, timeout_us,
  max_retries, node_count,
  (SELECT count(*) FROM task_deps d WHERE d.dep_ref = tasks_v1.task_ref) FROM tasks_v1;
CREATE INDEX task_status_by_status ON task_status(status, task_ref);
CREATE INDEX task_status_settled ON task_status(settled_at) WHERE settled_at IS NOT NULL;
DROP TABLE tasks_v1;
DROP TABLE task_specs;
ALTER TABLE node_seq ADD COLUMN n_above INTEGER NOT NULL DEFAULT 0;
INSERT INTO node_seq(node_ref, hwm)
  SELECT node_ref, 0 FROM nodes WHERE node_ref NOT IN (SELECT node_ref FROM node_seq);
UPDATE node_seq SET n_above = (SELECT count(*) FROM seq_above a
  WHERE a.node_ref = node_seq.node_ref);
CREATE TABLE sequences(
  name  TEXT PRIMARY KEY,
  value BIGINT NOT NULL) WITHOUT ROWID;
INSERT INTO sequences(name, value)
  SELECT 'hist_ids', value - 1 FROM meta WHERE name = 'next_hist_id';
DROP TABLE meta;
*/
)sql";

// Schema 2 -> 3: the lifecycle (start deadlines, extensions, permanent
// failures, compensation, priority order of due work, node capabilities,
// alert delivery) and security (tokens, audit). Written once for both.
constexpr std::string_view kToV3 = R"sql(
ALTER TABLE task_status ADD COLUMN start_timeout_us BIGINT NOT NULL DEFAULT 0;
ALTER TABLE task_status ADD COLUMN compensate BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE task_nodes ADD COLUMN start_deadline BIGINT;
ALTER TABLE task_nodes ADD COLUMN extensions INTEGER NOT NULL DEFAULT 0;
ALTER TABLE task_nodes ADD COLUMN permanent BOOLEAN NOT NULL DEFAULT false;
ALTER TABLE task_nodes ADD COLUMN priority INTEGER NOT NULL DEFAULT 1;
UPDATE task_nodes SET priority = (SELECT t.priority FROM tasks t
  WHERE t.task_ref = task_nodes.task_ref);
DROP INDEX task_nodes_due;
CREATE INDEX task_nodes_due ON task_nodes(priority, due_at) WHERE due_at IS NOT NULL;
ALTER TABLE nodes ADD COLUMN disabled_json TEXT NOT NULL DEFAULT '[]';
ALTER TABLE alerts ADD COLUMN delivery INTEGER NOT NULL DEFAULT 0;
ALTER TABLE alerts ADD COLUMN attempts INTEGER NOT NULL DEFAULT 0;
ALTER TABLE alerts ADD COLUMN delivery_detail TEXT NOT NULL DEFAULT '';
ALTER TABLE alerts ADD COLUMN next_delivery_at BIGINT;
-- Alerts raised before webhooks existed are not sent now.
UPDATE alerts SET delivery = 1, delivery_detail = 'before webhooks';
CREATE INDEX alerts_to_deliver ON alerts(alert_id) WHERE delivery IN (0, 2);
CREATE TABLE tokens(
  token_ref  @id,
  name       TEXT NOT NULL UNIQUE,
  role       TEXT NOT NULL,
  hash       TEXT NOT NULL UNIQUE,
  created_at BIGINT NOT NULL,
  expires_at BIGINT,
  revoked_at BIGINT,
  created_by TEXT NOT NULL DEFAULT '');
CREATE TABLE audit(
  audit_id    @id,
  at          BIGINT NOT NULL,
  who         TEXT NOT NULL,
  action      TEXT NOT NULL,
  target      TEXT NOT NULL DEFAULT '',
  args_digest TEXT NOT NULL DEFAULT '',
  peer        TEXT NOT NULL DEFAULT '',
  outcome     TEXT NOT NULL);
CREATE INDEX audit_by_time ON audit(at);
)sql";

// Schema 3 -> 4: rollouts, operator holds and selectors that follow the
// fleet (issue 21).
constexpr std::string_view kToV4 = R"sql(
ALTER TABLE task_status ADD COLUMN open_batch INTEGER NOT NULL DEFAULT 0;
ALTER TABLE task_status ADD COLUMN held_by TEXT NOT NULL DEFAULT '';
ALTER TABLE task_status ADD COLUMN follow BOOLEAN NOT NULL DEFAULT false;
CREATE INDEX task_status_follow ON task_status(task_ref) WHERE follow;
ALTER TABLE task_nodes ADD COLUMN batch INTEGER NOT NULL DEFAULT 0;
CREATE TABLE rollouts(
  task_ref   @pk,
  state      INTEGER NOT NULL,
  batches    INTEGER NOT NULL,
  paused_by  TEXT NOT NULL DEFAULT '',
  reason     TEXT NOT NULL DEFAULT '',
  next_at    BIGINT,
  tolerated  INTEGER NOT NULL DEFAULT 0,
  version    BIGINT NOT NULL,
  updated_at BIGINT NOT NULL);
CREATE INDEX rollouts_active ON rollouts(task_ref) WHERE state < 5;
)sql";

// Schema 4 -> 5: leases and replicas, for several orchestrators (issue 19).
constexpr std::string_view kToV5 = R"sql(
ALTER TABLE history ADD COLUMN epoch BIGINT NOT NULL DEFAULT 0;
-- Orchestrator replicas (lease.h): each lease's holder and epoch (+1 at
-- every acquisition; fenced writes check it), and every replica as last seen.
CREATE TABLE leases(
  name        TEXT PRIMARY KEY,
  holder      TEXT NOT NULL,
  address     TEXT NOT NULL,
  epoch       BIGINT NOT NULL,
  acquired_at BIGINT NOT NULL,
  renewed_at  BIGINT NOT NULL,
  expires_at  BIGINT NOT NULL);
CREATE TABLE replicas(
  replica_id  TEXT PRIMARY KEY,
  address     TEXT NOT NULL,
  started_at  BIGINT NOT NULL,
  seen_at     BIGINT NOT NULL);
)sql";

// Schema 5 -> 6: the dispatch queue's depth read from an index of the
// queue alone, not by a scan of every row a week of retention keeps.
constexpr std::string_view kToV6 = R"sql(
CREATE INDEX task_nodes_queued ON task_nodes(state) WHERE state IN (0, 1, 5);
)sql";

// kMigrations[v - 1] brings version v to v + 1.
constexpr std::array<std::string_view, kSchemaVersion - 1> kMigrations = {kToV2, kToV3, kToV4,
                                                                          kToV5, kToV6};

constexpr sql::Statement kSchemaLock{"/*@pg SELECT pg_advisory_xact_lock(7111969)*/"};
constexpr std::string_view kVersionTable =
    "CREATE TABLE IF NOT EXISTS schema_version(version INTEGER PRIMARY KEY"
    "/*@pg , applied_at TIMESTAMPTZ NOT NULL DEFAULT now()*/)";
constexpr sql::Statement kVersion{"SELECT COALESCE(max(version), 0) FROM schema_version"};
constexpr sql::Statement kAddVersion{"INSERT INTO schema_version(version) VALUES ($1)"};

// The DDL words for `dialect`.
std::string RenderWords(std::string_view text, std::string_view dialect) {
  const bool pg = dialect == "pg";
  const std::pair<std::string_view, std::string_view> words[] = {
      {"@id", pg ? "BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY" : "INTEGER PRIMARY KEY"},
      {"@pk", pg ? "BIGINT PRIMARY KEY" : "INTEGER PRIMARY KEY"},
      {"@clustered", pg ? "" : "WITHOUT ROWID"}};
  std::string out(text);
  for (const auto& [word, with] : words) {
    for (size_t at = out.find(word); at != std::string::npos; at = out.find(word, at)) {
      out.replace(at, word.size(), with);
      at += with.size();
    }
  }
  // "...) ;" reads oddly where a word rendered empty.
  for (size_t at = out.find(") ;"); at != std::string::npos; at = out.find(") ;", at)) {
    out.erase(at + 1, 1);
  }
  return out;
}

Status MigrateLocked(sql::Conn& conn, std::string_view dialect) {
  APOLLO_RETURN_IF_ERROR(conn.Script(kVersionTable));
  Result<sql::Rows> v = conn.Query(kVersion);
  if (!v.ok()) return v.status();
  const int version = v->empty() ? 0 : static_cast<int>(v->Int(0, 0));
  if (version > kSchemaVersion) {
    return Status::FailedPrecondition(
        "database schema version " + std::to_string(version) + " is newer than this binary's " +
        std::to_string(kSchemaVersion) + ": run a newer apollo-11, or restore a backup");
  }
  if (version == kSchemaVersion) return Status::Ok();
  if (version == 0) {
    APOLLO_RETURN_IF_ERROR(conn.Script(RenderWords(kTables, dialect)));
  } else {
    for (int from = version; from < kSchemaVersion; ++from) {
      Status st = conn.Script(RenderWords(kMigrations[from - 1], dialect));
      if (!st.ok()) {
        return st.WithPrefix("migrating schema " + std::to_string(from) + " to " +
                             std::to_string(from + 1));
      }
      if (from + 1 < kSchemaVersion) {
        sql::Params p(from + 1);
        conn.Exec(kAddVersion, p);
      }
    }
  }
  sql::Params p(kSchemaVersion);
  conn.Exec(kAddVersion, p);
  return conn.Flush();
}

}  // namespace

Status Migrate(sql::Conn& conn, std::string_view dialect) {
  APOLLO_RETURN_IF_ERROR(conn.Begin(sql::Access::kWrite));
  conn.Exec(kSchemaLock);
  Status st = MigrateLocked(conn, dialect);
  if (st.ok()) st = conn.Commit();
  if (!st.ok()) {
    conn.Rollback();
    return st.WithPrefix("migrating schema");
  }
  return Status::Ok();
}

std::string RenderSchema(std::string_view dialect) {
  return sql::KeepDialect(RenderWords(kTables, dialect), dialect);
}

std::string SchemaFile() {
  std::string out =
      "-- Apollo-11 state store schema for PostgreSQL, version " + std::to_string(kSchemaVersion) +
      ".\n"
      "--\n"
      "--   psql -d apollo_state -f schema.sql\n"
      "--\n"
      "-- creates everything on an empty database and is safe to run again. The\n"
      "-- orchestrator creates the same tables itself when it opens an empty\n"
      "-- database, and migrates an older one; this file refuses an older one.\n"
      "-- Generated from src/store/engine/schema.cc by `make schema` (a test\n"
      "-- keeps them identical): edit that file, not this one.\n"
      "SET client_min_messages = warning;\n"
      "BEGIN;\n"
      "-- Two orchestrators starting at once must not race on CREATE ... IF NOT EXISTS.\n"
      "SELECT pg_advisory_xact_lock(7111969);\n" +
      sql::KeepDialect(kVersionTable, "pg") +
      ";\n"
      "DO $$ BEGIN\n"
      "  IF (SELECT COALESCE(max(version), " +
      std::to_string(kSchemaVersion) + ") FROM schema_version) < " +
      std::to_string(kSchemaVersion) +
      " THEN\n"
      "    RAISE EXCEPTION 'this database has an older Apollo-11 schema: start the "
      "orchestrator on it once to migrate it';\n"
      "  END IF;\n"
      "END $$;\n" +
      RenderSchema("pg") + "\nINSERT INTO schema_version(version) VALUES (" +
      std::to_string(kSchemaVersion) + ") ON CONFLICT (version) DO NOTHING;\nCOMMIT;\n";
  return out;
}

}  // namespace apollo::store::engine
