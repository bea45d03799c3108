// The JSON API v1 messages (proto/apollo/v1/api.proto in protobuf's JSON
// mapping as the orchestrator prints it: proto field names, 64-bit integers
// as strings, every primitive field present).

export type TaskState =
  | 'PENDING'
  | 'DISPATCHED'
  | 'RUNNING'
  | 'SUCCEEDED'
  | 'FAILED'
  | 'RETRYING'
  | 'CANCELLED'
  | 'TIMEOUT';

export interface NodeTask {
  node_id: string;
  status: string;
  version: string;
  attempt: number;
  retries: number;
  updated_at_us: string;
  last_error: string;
  blocked_reason: string;
  result_json: string;
  permanent: boolean;
  batch?: number; // its rollout batch (1..); absent: no rollout
}

// Where a task's rollout stands (docs/rollouts.md).
export interface RolloutStatus {
  state: string;
  open_batch: number;
  batches: number;
  failures: number;
  tolerated: number;
  paused_by: string;
  reason: string;
  next_at_us: string;
  summary: string;
}

export interface Task {
  task_id: string;
  intent: string;
  status: string;
  spec_json: string;
  created_at_us: string;
  nodes: NodeTask[];
  metadata: Record<string, string>;
  compensates: string;
  start_timeout_s: string;
  rollout?: RolloutStatus;
  held_by?: string;
}

export interface ListTasksResponse {
  tasks: Task[];
  next_page_token: string;
}

export interface HistoryEntry {
  task_id: string;
  node_id: string;
  from_status: string;
  to_status: string;
  version: string;
  attempt: number;
  cause: string;
  detail: string;
  at_us: string;
}

export interface TaskEventsResponse {
  entries: HistoryEntry[];
}

export interface Problem {
  file: string;
  line: number;
  column: number;
  message: string;
  task_index?: number;
}

export interface SubmittedTask {
  task_id: string;
  created: boolean;
  nodes: string[];
}

export interface SubmitTasksResponse {
  tasks: SubmittedTask[];
  errors: Problem[];
  warnings: string[];
}

export interface ApolloNode {
  node_id: string;
  labels: Record<string, string>;
  groups: string[];
  intents: string[];
  liveness: string;
  mode: string;
  last_heartbeat_us: string;
  connected: boolean;
  running: number;
  disabled_intents: string[];
}

export interface ListNodesResponse {
  nodes: ApolloNode[];
}

export interface Alert {
  id: string;
  kind: string;
  task_id: string;
  node_id: string;
  from_status: string;
  to_status: string;
  event_id: string;
  message: string;
  at_us: string;
  delivery: string;
  delivery_attempts: number;
  delivery_detail: string;
}

export interface ListAlertsResponse {
  alerts: Alert[];
  more: boolean;
  next_after_id: string;
}

export interface DeadLetter {
  id: string;
  event_id: string;
  task_id: string;
  node_id: string;
  sequence_number: string;
  event_type: string;
  reason: string;
  deliveries: number;
  parked_at_us: string;
  event_json: string;
}

export interface ListDeadLettersResponse {
  letters: DeadLetter[];
  more: boolean;
}

export interface ReplayDeadLettersResponse {
  replayed: number;
  remaining: number;
}

export interface PartitionStatus {
  partition: number;
  published: string;
  applied: string;
  pending: string;
  dead_lettered: string;
  oldest_unapplied_ms: string;
}

export interface BusStatusResponse {
  backend: string;
  partitions: PartitionStatus[];
  dead_letters: string;
  dead_letters_capped: boolean;
}

export interface IntentInfo {
  intent: string;
  breaker: string;
  consecutive_failures: number;
  opened_at_us: string;
  times_opened: string;
}

export interface ListIntentsResponse {
  intents: IntentInfo[];
  queue_depth: string;
  queue_capacity: string;
  queue_paused: boolean;
  retry_budget_taken: string;
  retry_budget_refused: string;
}

// A task file's spec as the store keeps it (Task.spec_json): only the
// fields the dashboard reads.
export interface TaskSpecJson {
  depends_on?: string[];
  params?: unknown;
  target_selector?: unknown;
  timeout?: number;
  priority?: string;
}
