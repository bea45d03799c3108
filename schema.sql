-- Apollo-11 state store schema for PostgreSQL, version 6.
--
--   psql -d apollo_state -f schema.sql
--
-- creates everything on an empty database and is safe to run again. The
-- orchestrator creates the same tables itself when it opens an empty
-- database, and migrates an older one; this file refuses an older one.
-- Generated from src/store/engine/schema.cc by `make schema` (a test
-- keeps them identical): edit that file, not this one.
SET client_min_messages = warning;
BEGIN;
-- Two orchestrators starting at once must not race on CREATE ... IF NOT EXISTS.
SELECT pg_advisory_xact_lock(7111969);
CREATE TABLE IF NOT EXISTS schema_version(version INTEGER PRIMARY KEY  , applied_at TIMESTAMPTZ NOT NULL DEFAULT now() );
DO $$ BEGIN
  IF (SELECT COALESCE(max(version), 6) FROM schema_version) < 6 THEN
    RAISE EXCEPTION 'this database has an older Apollo-11 schema: start the orchestrator on it once to migrate it';
  END IF;
END $$;

CREATE TABLE IF NOT EXISTS nodes(
  node_ref       BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
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
  node_ref BIGINT PRIMARY KEY,
  hwm      BIGINT NOT NULL,
  n_above  INTEGER NOT NULL DEFAULT 0);  -- rows in seq_above (0: skip reading it)

-- Seqs stored above a gap in the node's sequence, until the gap closes.
CREATE TABLE IF NOT EXISTS seq_above(
  node_ref BIGINT NOT NULL,
  seq      BIGINT NOT NULL,
  at       BIGINT NOT NULL,
  PRIMARY KEY (node_ref, seq));

-- What a task is; never updated after creation. The hot path only maps a
-- task_id to its task_ref here (the task_id index covers it).
CREATE TABLE IF NOT EXISTS tasks(
  task_ref    BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
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
  task_ref    BIGINT PRIMARY KEY,
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
  task_ref   BIGINT PRIMARY KEY,
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
  PRIMARY KEY (task_ref, dep_ref));
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
  PRIMARY KEY (task_ref, node_ref));
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
  PRIMARY KEY (task_ref, hist_id));

-- Payloads over 1 KiB, kept out of the hot rows.
CREATE TABLE IF NOT EXISTS payloads(
  payload_id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  task_ref   BIGINT NOT NULL,
  body       TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS payloads_by_task ON payloads(task_ref);

CREATE TABLE IF NOT EXISTS alerts(
  alert_id   BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
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
  letter_id  BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  event_json TEXT NOT NULL,
  reason     TEXT NOT NULL,
  deliveries INTEGER NOT NULL,
  parked_at  BIGINT NOT NULL);

-- Operator tokens: only a hash of each is kept.
CREATE TABLE IF NOT EXISTS tokens(
  token_ref  BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  name       TEXT NOT NULL UNIQUE,
  role       TEXT NOT NULL,
  hash       TEXT NOT NULL UNIQUE,
  created_at BIGINT NOT NULL,
  expires_at BIGINT,
  revoked_at BIGINT,
  created_by TEXT NOT NULL DEFAULT '');

-- Every mutating operator call: who, what, on what, from where, outcome.
CREATE TABLE IF NOT EXISTS audit(
  audit_id    BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
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
  CREATE SEQUENCE IF NOT EXISTS hist_ids; 


INSERT INTO schema_version(version) VALUES (6) ON CONFLICT (version) DO NOTHING;
COMMIT;
