// State colours: one per task state, used by badges, the DAG and the
// timeline, with the legend that explains them. Each colour is shown with
// its name (never colour alone).

export interface StateLook {
  color: string; // fill
  text: string; // text on the fill
  meaning: string;
}

export const kStates: Record<string, StateLook> = {
  PENDING: { color: '#d0d4da', text: '#1d232b', meaning: 'waiting: dependencies, a node, a breaker or the queue' },
  DISPATCHED: { color: '#9cc3f5', text: '#0d2a4d', meaning: 'sent to the node, not acknowledged yet' },
  RUNNING: { color: '#2f6fde', text: '#ffffff', meaning: 'the node is running it' },
  RETRYING: { color: '#f2a33a', text: '#2b1a00', meaning: 'failed or timed out; will run again' },
  SUCCEEDED: { color: '#2e9e4f', text: '#ffffff', meaning: 'done' },
  FAILED: { color: '#d6333a', text: '#ffffff', meaning: 'failed; no retries left (or permanent)' },
  TIMEOUT: { color: '#8e1b4d', text: '#ffffff', meaning: 'did not finish (or start) in time' },
  CANCELLED: { color: '#5a5f68', text: '#ffffff', meaning: 'cancelled by an operator' },
};

export const kStateOrder = [
  'PENDING',
  'DISPATCHED',
  'RUNNING',
  'RETRYING',
  'SUCCEEDED',
  'FAILED',
  'TIMEOUT',
  'CANCELLED',
];

const kUnknown: StateLook = { color: '#ffffff', text: '#1d232b', meaning: 'unknown state' };

export function LookOf(state: string): StateLook {
  return kStates[state] ?? kUnknown;
}

// Liveness of nodes and breaker states reuse the same palette.
export const kLiveness: Record<string, string> = {
  ALIVE: 'SUCCEEDED',
  SUSPECT: 'RETRYING',
  LOST: 'FAILED',
  NEVER_SEEN: 'PENDING',
};

export const kBreaker: Record<string, string> = {
  CLOSED: 'SUCCEEDED',
  HALF_OPEN: 'RETRYING',
  OPEN: 'FAILED',
};
