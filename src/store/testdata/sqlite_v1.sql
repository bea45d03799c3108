PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE schema_version(version INTEGER NOT NULL);
INSERT INTO schema_version VALUES(1);
CREATE TABLE meta(
  name  TEXT PRIMARY KEY,
  value INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO meta VALUES('next_hist_id',14);
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
INSERT INTO nodes VALUES(1,'n1',1,'{"role":"web"}','["g1"]','["collect_metrics","exec"]','normal','0.1.0',1764000003000000,1764000003000000);
INSERT INTO nodes VALUES(2,'n2',1,'{"role":"db"}','[]','["collect_metrics"]','normal','0.1.0',1764000000000000,1764000000000000);
INSERT INTO nodes VALUES(3,'n3',0,'{}','[]','[]','','',NULL,1764000000000000);
CREATE TABLE node_seq(
  node_ref INTEGER PRIMARY KEY,
  hwm      INTEGER NOT NULL);
INSERT INTO node_seq VALUES(1,2);
INSERT INTO node_seq VALUES(2,2);
CREATE TABLE seq_above(
  node_ref INTEGER NOT NULL,
  seq      INTEGER NOT NULL,
  at       INTEGER NOT NULL,
  PRIMARY KEY (node_ref, seq)) WITHOUT ROWID;
INSERT INTO seq_above VALUES(2,5,1764000003000000);
INSERT INTO seq_above VALUES(2,6,1764000003000000);
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
INSERT INTO tasks VALUES(1,'a','collect_metrics',3,1,1,60000000,2,1764000000000000,1764000002000000,1764000002000000);
INSERT INTO tasks VALUES(2,'b','collect_metrics',0,2,1,60000000,2,1764000000000000,1764000000000000,NULL);
INSERT INTO tasks VALUES(3,'c','collect_metrics',0,1,1,60000000,2,1764000000000000,1764000000000000,NULL);
INSERT INTO tasks VALUES(4,'d','collect_metrics',4,1,1,60000000,2,1764000000000000,1764000003000000,NULL);
INSERT INTO tasks VALUES(5,'f','collect_metrics',0,1,1,60000000,2,1764000000000000,1764000000000000,NULL);
CREATE TABLE task_specs(
  task_ref INTEGER PRIMARY KEY,
  spec     TEXT NOT NULL);
INSERT INTO task_specs VALUES(1,'{"callback_url":"","depends_on":[],"intent":"collect_metrics","metadata":{"ticket":"CHG-1"},"params":{"x":"1"},"priority":"normal","retry_policy":{"backoff":"exponential","initial_interval":5,"jitter":false,"max_interval":60,"max_retries":2},"target_selector":{"allow_empty":false,"nodes":["n1"],"type":"nodes"},"task_id":"a","timeout":60}');
INSERT INTO task_specs VALUES(2,'{"callback_url":"","depends_on":["a"],"intent":"collect_metrics","metadata":{"ticket":"CHG-1"},"params":{"x":"1"},"priority":"normal","retry_policy":{"backoff":"exponential","initial_interval":5,"jitter":false,"max_interval":60,"max_retries":2},"target_selector":{"allow_empty":false,"nodes":["n1","n2"],"type":"nodes"},"task_id":"b","timeout":60}');
INSERT INTO task_specs VALUES(3,'{"callback_url":"","depends_on":[],"intent":"collect_metrics","metadata":{"ticket":"CHG-1"},"params":{"x":"1"},"priority":"normal","retry_policy":{"backoff":"exponential","initial_interval":5,"jitter":false,"max_interval":60,"max_retries":2},"target_selector":{"allow_empty":false,"nodes":["n3"],"type":"nodes"},"task_id":"c","timeout":60}');
INSERT INTO task_specs VALUES(4,'{"callback_url":"","depends_on":[],"intent":"collect_metrics","metadata":{"ticket":"CHG-1"},"params":{"x":"1"},"priority":"normal","retry_policy":{"backoff":"exponential","initial_interval":5,"jitter":false,"max_interval":60,"max_retries":2},"target_selector":{"allow_empty":false,"nodes":["n2"],"type":"nodes"},"task_id":"d","timeout":60}');
INSERT INTO task_specs VALUES(5,'{"callback_url":"","depends_on":["c"],"intent":"collect_metrics","metadata":{"ticket":"CHG-1"},"params":{"x":"1"},"priority":"normal","retry_policy":{"backoff":"exponential","initial_interval":5,"jitter":false,"max_interval":60,"max_retries":2},"target_selector":{"allow_empty":false,"nodes":["n1"],"type":"nodes"},"task_id":"f","timeout":60}');
CREATE TABLE task_deps(
  task_ref INTEGER NOT NULL,
  dep_ref  INTEGER NOT NULL,
  PRIMARY KEY (task_ref, dep_ref)) WITHOUT ROWID;
INSERT INTO task_deps VALUES(2,1);
INSERT INTO task_deps VALUES(5,3);
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
INSERT INTO task_nodes VALUES(1,1,3,4,1,0,1764000000000000,1764000002000000,0,NULL,'','',1,'');
INSERT INTO task_nodes VALUES(2,1,0,1,0,0,1764000000000000,1764000000000000,1,1764000002000000,'','',NULL,'');
INSERT INTO task_nodes VALUES(2,2,0,1,0,0,1764000000000000,1764000000000000,1,1764000002000000,'','',NULL,'');
INSERT INTO task_nodes VALUES(3,3,0,1,0,0,1764000000000000,1764000000000000,1,1764000000000000,'','',NULL,'node_not_registered');
INSERT INTO task_nodes VALUES(4,2,4,4,1,0,1764000000000000,1764000003000000,5,1764000003000000,'disk full','',NULL,'');
INSERT INTO task_nodes VALUES(5,1,0,1,0,0,1764000000000000,1764000000000000,0,NULL,'','',NULL,'deps_pending [c]');
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
INSERT INTO history VALUES(1,1,1,9,0,NULL,NULL,0,0,0,1,1764000000000000,'','',NULL);
INSERT INTO history VALUES(1,7,1,2,0,NULL,NULL,1,0,1,2,1764000001000000,'','',NULL);
INSERT INTO history VALUES(1,9,1,1,0,1,1,1,1,2,3,1764000002000000,'','',NULL);
INSERT INTO history VALUES(1,10,1,1,0,2,3,1,2,3,4,1764000002000000,'','',2);
INSERT INTO history VALUES(2,2,1,9,0,NULL,NULL,0,0,0,1,1764000000000000,'deps_pending [a]','',NULL);
INSERT INTO history VALUES(2,3,2,9,0,NULL,NULL,0,0,0,1,1764000000000000,'deps_pending [a]','',NULL);
INSERT INTO history VALUES(3,4,3,9,0,NULL,NULL,0,0,0,1,1764000000000000,'node_not_registered','',NULL);
INSERT INTO history VALUES(4,5,2,9,0,NULL,NULL,0,0,0,1,1764000000000000,'','',NULL);
INSERT INTO history VALUES(4,8,2,2,0,NULL,NULL,1,0,1,2,1764000001000000,'','',NULL);
INSERT INTO history VALUES(4,11,2,1,0,1,1,1,1,2,3,1764000003000000,'','',NULL);
INSERT INTO history VALUES(4,12,2,1,0,2,4,1,2,4,4,1764000003000000,'','{"error":"disk full"}',NULL);
INSERT INTO history VALUES(4,13,2,1,0,5,2,1,4,4,4,1764000003000000,'','{"pct":50}',NULL);
INSERT INTO history VALUES(5,6,1,9,0,NULL,NULL,0,0,0,1,1764000000000000,'deps_pending [c]','',NULL);
CREATE TABLE payloads(
  payload_id INTEGER PRIMARY KEY,
  task_ref   INTEGER NOT NULL,
  body       TEXT NOT NULL);
INSERT INTO payloads VALUES(1,1,'{"out":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}');
INSERT INTO payloads VALUES(2,1,'{"out":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}');
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
INSERT INTO alerts VALUES(1,'unknown_task','zz','n2',NULL,NULL,'n2-6','no task zz on node n2',1764000003000000);
INSERT INTO alerts VALUES(2,'circuit_open','','',NULL,NULL,'','collect_metrics: 5 failures',1764000003000000);
CREATE TABLE dead_letters(
  letter_id  INTEGER PRIMARY KEY,
  event_json TEXT NOT NULL,
  reason     TEXT NOT NULL,
  deliveries INTEGER NOT NULL,
  parked_at  INTEGER NOT NULL);
INSERT INTO dead_letters VALUES(1,'{"attempt":1,"event_id":"n1-9","event_type":"SUCCEEDED","node_id":"n1","payload":null,"sequence_number":9,"task_id":"a","timestamp":"2025-11-24T16:00:00.000000Z","timestamp_us":1764000000000000}','poison',5,1764000003000000);
CREATE INDEX tasks_by_status ON tasks(status, task_ref);
CREATE INDEX tasks_by_intent ON tasks(intent, task_ref);
CREATE INDEX tasks_by_created ON tasks(created_at);
CREATE INDEX tasks_settled ON tasks(settled_at) WHERE settled_at IS NOT NULL;
CREATE INDEX task_deps_rev ON task_deps(dep_ref, task_ref);
CREATE INDEX task_nodes_by_node ON task_nodes(node_ref, task_ref);
CREATE INDEX task_nodes_due ON task_nodes(due_at) WHERE due_at IS NOT NULL;
CREATE INDEX payloads_by_task ON payloads(task_ref);
CREATE INDEX alerts_by_time ON alerts(at);
COMMIT;
