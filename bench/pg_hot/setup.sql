-- bench/pg_hot: fresh tables for one run (see run.sh).
SET client_min_messages = warning;
DROP TABLE IF EXISTS tn_a, tn_b, due_b;
CREATE TABLE tn_a(task_ref bigint, node_ref bigint, state int NOT NULL, version bigint NOT NULL,
  attempt bigint NOT NULL, retries int NOT NULL, created_at bigint NOT NULL,
  updated_at bigint NOT NULL, due_kind int NOT NULL, due_at bigint,
  last_error text NOT NULL DEFAULT '', result text NOT NULL DEFAULT '', result_ref bigint,
  blocked_reason text NOT NULL DEFAULT '', start_deadline bigint,
  extensions int NOT NULL DEFAULT 0, permanent bool NOT NULL DEFAULT false,
  priority int NOT NULL DEFAULT 1, batch int NOT NULL DEFAULT 0,
  PRIMARY KEY (task_ref, node_ref));
CREATE INDEX ON tn_a(node_ref, task_ref);
CREATE INDEX ON tn_a(priority, due_at) WHERE due_at IS NOT NULL;
CREATE INDEX ON tn_a(state) WHERE state IN (0, 1, 5);
CREATE TABLE tn_b (LIKE tn_a INCLUDING DEFAULTS) WITH (fillfactor = 80);
ALTER TABLE tn_b ADD PRIMARY KEY (task_ref, node_ref);
CREATE INDEX ON tn_b(node_ref, task_ref);
CREATE TABLE due_b(task_ref bigint, node_ref bigint, priority int NOT NULL,
  due_at bigint NOT NULL, due_kind int NOT NULL, state int NOT NULL,
  PRIMARY KEY (task_ref, node_ref));
CREATE INDEX ON due_b(priority, due_at);
INSERT INTO tn_a SELECT g, g % 100, 1, 1, 1, 0, 0, 0, 2, 1000 + g FROM generate_series(1, 200000) g;
INSERT INTO tn_b SELECT * FROM tn_a;
INSERT INTO due_b SELECT task_ref, node_ref, 1, due_at, due_kind, state FROM tn_a;
VACUUM ANALYZE tn_a;
VACUUM ANALYZE tn_b;
VACUUM ANALYZE due_b;
CHECKPOINT;
SELECT pg_stat_reset_shared('wal');
SELECT pg_stat_reset();
