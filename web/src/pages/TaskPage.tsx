// One task: why it is where it is (blocked reasons, dependencies, errors),
// its dependency graph with states, its per-node rows, and the timeline of
// every transition with its cause. Live from the feed.

import { useEffect, useRef, useState } from 'preact/hooks';
import { Api } from '../api';
import { Dag } from '../components/Dag';
import { Chips, Empty, ErrorBox, Kv, Legend, Loading, NeedsRole, StateBadge, When } from '../components/common';
import { DepsOf, LoadNeighbourhood, TaskCache, type GraphTask } from '../graph';
import { useFeed } from '../hooks';
import { TaskHref } from '../router';
import type { HistoryEntry, NodeTask, Task, TaskEventsResponse } from '../types';
import { Duration, UsToMs } from '../time';
import { useCan } from '../whoami';

// Specs never change: kept across pages for the app's lifetime.
const kSpecs = new TaskCache();
// Polling mode refreshes every 2 s; the downstream search (a list walk) is
// redone at most this often.
const kGraphRefreshMs = 10_000;
const kFinal = new Set(['SUCCEEDED', 'FAILED', 'CANCELLED', 'TIMEOUT']);

// What a blocked_reason means, and what to do about it.
export function ExplainBlocked(reason: string, node: string): string {
  const word = reason.split(' ')[0];
  switch (word) {
    case 'node_not_registered':
      return `Node ${node} has never connected. Start an agent with --node-id ${node}, or fix the task's target_selector.`;
    case 'node_disconnected':
      return `Node ${node} is not connected; the work waits for it to come back.`;
    case 'node_lost':
      return `Node ${node} is lost (no heartbeat); the work waits for it to come back.`;
    case 'node_syncing':
      return `Node ${node} reconnected and is being reconciled before it gets new work.`;
    case 'conservative_mode':
      return `Node ${node} is in conservative mode (it was cut off too long); it takes work again once reconciled.`;
    case 'circuit_open':
      return `The circuit breaker of intent ${reason.split(' ')[1] ?? ''} is open after repeated failures (see Bus & intents).`;
    case 'retry_budget':
      return 'The retry budget is spent: re-dispatches wait for tokens (see Bus & intents).';
    case 'awaiting_ack':
      return `Sent to ${node}; no acknowledgement yet, so it is being sent again.`;
    case 'rollout_waiting':
      return `Waits for its rollout batch (${reason.split(' ').slice(1).join(' ')}): it opens once the batches before it ended (see Rollout).`;
    case 'held_by':
      return `An operator holds this task (${reason.split(' ').slice(1).join(' ')}); it starts once released (apollo-cli task release).`;
    default:
      return '';
  }
}

function Why({ task, graph }: { task: Task; graph: Map<string, GraphTask> | null }) {
  const items: preact.JSX.Element[] = [];
  for (const r of task.nodes) {
    if (r.blocked_reason) {
      items.push(
        <li key={`b-${r.node_id}`} data-testid="blocked">
          <strong>{r.node_id}</strong> is blocked: <code class="reason">{r.blocked_reason}</code>
          <div class="muted">{ExplainBlocked(r.blocked_reason, r.node_id)}</div>
        </li>,
      );
    } else if ((r.status === 'FAILED' || r.status === 'TIMEOUT' || r.status === 'RETRYING') && r.last_error) {
      items.push(
        <li key={`e-${r.node_id}`}>
          <strong>{r.node_id}</strong> <StateBadge state={r.status} /> <code class="reason">{r.last_error}</code>
          {r.permanent && <span class="muted"> (permanent: not retried)</span>}
        </li>,
      );
    }
  }
  const waiting = DepsOf(task)
    .map((d) => graph?.get(d))
    .filter((g): g is GraphTask => !!g && g.status !== 'SUCCEEDED');
  if (task.status === 'PENDING' && waiting.length > 0) {
    items.push(
      <li key="deps" data-testid="waiting-deps">
        Waiting for {waiting.length} dependenc{waiting.length === 1 ? 'y' : 'ies'}:{' '}
        {waiting.map((g) => (
          <span key={g.task_id} class="dep">
            <a href={TaskHref(g.task_id)}>{g.task_id}</a> <StateBadge state={g.status} label={g.status || 'not in the store'} />{' '}
          </span>
        ))}
      </li>,
    );
  }
  if (items.length === 0) return null;
  return (
    <section class="why" aria-labelledby="why-h">
      <h2 id="why-h">Why it is {task.status}</h2>
      <ul>{items}</ul>
    </section>
  );
}

function NodeRows({ rows, batches }: { rows: NodeTask[]; batches: boolean }) {
  if (rows.length === 0) return <Empty>No node rows: the selector matched no node.</Empty>;
  return (
    <table data-testid="node-rows">
      <thead>
        <tr>
          <th scope="col">Node</th>
          {batches && (
            <th scope="col" class="num">
              Batch
            </th>
          )}
          <th scope="col">State</th>
          <th scope="col" class="num">Attempt</th>
          <th scope="col" class="num">Retries</th>
          <th scope="col">Blocked reason</th>
          <th scope="col">Last error</th>
          <th scope="col">Updated</th>
          <th scope="col">Result</th>
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr key={r.node_id} data-node-id={r.node_id}>
            <td>
              <a href="#/nodes">{r.node_id}</a>
            </td>
            {batches && <td class="num batch-cell">{r.batch ?? 0}</td>}
            <td>
              <StateBadge state={r.status} />
              {r.permanent && <span class="muted"> permanent</span>}
            </td>
            <td class="num">{r.attempt}</td>
            <td class="num">{r.retries}</td>
            <td class="blocked-cell">{r.blocked_reason ? <code>{r.blocked_reason}</code> : <span class="muted">—</span>}</td>
            <td class="error-cell">{r.last_error ? <code>{r.last_error}</code> : <span class="muted">—</span>}</td>
            <td>
              <When us={r.updated_at_us} />
            </td>
            <td>
              {r.result_json ? (
                <details>
                  <summary>result</summary>
                  <pre>{Pretty(r.result_json)}</pre>
                </details>
              ) : (
                <span class="muted">—</span>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

function Pretty(json: string): string {
  try {
    return JSON.stringify(JSON.parse(json), null, 2);
  } catch {
    return json;
  }
}

function Timeline({ entries }: { entries: HistoryEntry[] | null }) {
  const [node, setNode] = useState('');
  if (!entries) return <Loading />;
  if (entries.length === 0) return <Empty>No transitions recorded.</Empty>;
  const nodes = [...new Set(entries.map((e) => e.node_id))];
  const shown = node ? entries.filter((e) => e.node_id === node) : entries;
  const t0 = UsToMs(entries[0].at_us);
  return (
    <>
      {nodes.length > 1 && (
        <label class="inline">
          Node{' '}
          <select value={node} onChange={(e) => setNode((e.target as HTMLSelectElement).value)}>
            <option value="">all ({nodes.length})</option>
            {nodes.map((n) => (
              <option key={n} value={n}>
                {n || '(the task)'}
              </option>
            ))}
          </select>
        </label>
      )}
      <ol class="timeline" data-testid="timeline">
        {shown.map((e, i) => (
          <li key={i} data-to={e.node_id ? e.to_status : ''} data-node-id={e.node_id}>
            <span class="t">
              <When us={e.at_us} ms />
              <span class="muted"> +{Duration(UsToMs(e.at_us) - t0)}</span>
            </span>
            <span class="what">
              {e.node_id ? (
                <>
                  <strong>{e.node_id}</strong>{' '}
                  {e.from_status ? <StateBadge state={e.from_status} /> : <span class="muted">new</span>} →{' '}
                  <StateBadge state={e.to_status} />
                  {e.attempt > 0 && <span class="muted"> attempt {e.attempt}</span>}
                </>
              ) : (
                <strong>the task</strong>
              )}
            </span>
            <span class="cause">
              cause <code>{e.cause}</code>
              {e.detail && <> — {e.detail}</>}
            </span>
          </li>
        ))}
      </ol>
    </>
  );
}

function Actions({ task, onDone }: { task: Task; onDone: () => void }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const [note, setNote] = useState('');
  const run = async (what: 'cancel' | 'retry') => {
    let body = '{}';
    if (what === 'cancel') {
      const reason = window.prompt(`Cancel ${task.task_id}? Reason (kept in its history):`, 'cancelled from the dashboard');
      if (reason === null) return;
      body = JSON.stringify({ reason });
    }
    setBusy(true);
    setError(null);
    try {
      await Api<Task>(`api/v1/tasks/${encodeURIComponent(task.task_id)}/${what}`, { method: 'POST', body });
      setNote(what === 'cancel' ? 'Cancel requested.' : 'Retry requested.');
      onDone();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const retryable = task.nodes.some((r) => r.status === 'FAILED' || r.status === 'TIMEOUT');
  // Cancel and retry need an operator token.
  const can = useCan('operator');
  const gate = {
    title: can.reason || undefined,
    'aria-describedby': can.allowed ? undefined : 'task-actions-needs',
  };
  return (
    <div class="actions">
      <button type="button" disabled={busy || kFinal.has(task.status) || !can.allowed} {...gate} onClick={() => void run('cancel')}>
        Cancel task
      </button>
      <button type="button" disabled={busy || !retryable || !can.allowed} {...gate} onClick={() => void run('retry')}>
        Retry failed rows
      </button>
      <NeedsRole perm={can} id="task-actions-needs" />
      {note && <span class="muted">{note}</span>}
      <ErrorBox error={error} title="Refused" />
    </div>
  );
}

// A rollout: where it stands, and an operator's pause / resume / approve /
// abort (docs/rollouts.md).
function Rollout({ task, onDone }: { task: Task; onDone: () => void }) {
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  const can = useCan('operator');
  const r = task.rollout;
  if (!r) return null;
  const act = async (action: string) => {
    const reason = window.prompt(`${action} the rollout of ${task.task_id}? Reason (kept in its history):`, '');
    if (reason === null) return;
    setBusy(true);
    setError(null);
    try {
      await Api<Task>(`api/v1/tasks/${encodeURIComponent(task.task_id)}/rollout`, {
        method: 'POST',
        body: JSON.stringify({ action, reason }),
      });
      onDone();
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  const active = !['aborting', 'aborted', 'completed'].includes(r.state);
  const enabled: Record<string, boolean> = {
    pause: ['running', 'waiting', 'awaiting_approval'].includes(r.state),
    resume: r.state === 'paused',
    approve: r.state === 'awaiting_approval',
    abort: active,
  };
  const gate = { title: can.reason || undefined };
  return (
    <section aria-labelledby="rollout-h" data-testid="rollout" data-state={r.state}>
      <h2 id="rollout-h">Rollout</h2>
      <p data-testid="rollout-summary">
        <strong class="rollout-state">{r.state.replace('_', ' ')}</strong>, batch {r.open_batch} of {r.batches}, {r.failures} failed of{' '}
        {r.tolerated} tolerated
        {r.paused_by && <> — {r.state.startsWith('abort') ? 'aborted' : 'paused'} by {r.paused_by}</>}
        {r.reason && <>: {r.reason}</>}
      </p>
      <div class="actions">
        {(['pause', 'resume', 'approve', 'abort'] as const).map((a) => (
          <button key={a} type="button" disabled={busy || !enabled[a] || !can.allowed} {...gate} onClick={() => void act(a)}>
            {a[0].toUpperCase() + a.slice(1)}
          </button>
        ))}
        <ErrorBox error={error} title="Refused" />
      </div>
    </section>
  );
}

export function TaskPage({ id }: { id: string }) {
  const [task, setTask] = useState<Task | null>(null);
  const [events, setEvents] = useState<HistoryEntry[] | null>(null);
  const [graph, setGraph] = useState<Map<string, GraphTask> | null>(null);
  const [truncated, setTruncated] = useState<string[]>([]);
  const [error, setError] = useState<unknown>(null);
  const [graphError, setGraphError] = useState<unknown>(null);
  const graphAt = useRef(0);
  const eventsTimer = useRef<number | undefined>(undefined);
  // States of this task the stream delivered so far. A fetch answered
  // after the stream delivered one was read at the server before it, or
  // while nothing changed: it must not overwrite the streamed state (a
  // slow GET once put a rollout back to "running" after the stream had
  // shown it waiting for approval, and no later change came to fix it).
  const streamed = useRef(0);
  const path = `api/v1/tasks/${encodeURIComponent(id)}`;

  const loadEvents = async () => {
    try {
      const r = await Api<TaskEventsResponse>(`${path}/events`);
      setEvents(r.entries);
    } catch (e) {
      setError(e);
    }
  };
  const loadGraph = async (t: Task) => {
    graphAt.current = Date.now();
    try {
      const n = await LoadNeighbourhood(t, kSpecs);
      setGraph(n.tasks);
      setTruncated(n.truncated);
      setGraphError(null);
    } catch (e) {
      setGraphError(e);
    }
  };
  const load = async (withGraph: boolean) => {
    const before = streamed.current;
    try {
      const t = await Api<Task>(path);
      if (streamed.current === before) setTask(t);
      setError(null);
      void loadEvents();
      if (withGraph || Date.now() - graphAt.current > kGraphRefreshMs) void loadGraph(t);
    } catch (e) {
      setError(e);
    }
  };
  useEffect(() => {
    void load(true);
    return () => window.clearTimeout(eventsTimer.current);
  }, [id]);

  useFeed({
    onTask: (t) => {
      if (t.task_id === id) {
        streamed.current++;
        setTask(t);
        // Several transitions often commit together: one events fetch.
        window.clearTimeout(eventsTimer.current);
        eventsTimer.current = window.setTimeout(() => void loadEvents(), 150);
      }
      kSpecs.Put(t);
      setGraph((g) => {
        if (!g) return g;
        const cur = g.get(t.task_id);
        const deps = DepsOf(t);
        if (cur) {
          if (cur.status === t.status) return g;
          return new Map(g).set(t.task_id, { ...cur, status: t.status });
        }
        // A new dependent of a task that is in the graph downstream of us.
        if (deps.length > 0 && deps.some((d) => g.has(d)) && task) {
          if (task.task_id !== t.task_id && IsDownstream(g, deps, id)) {
            return new Map(g).set(t.task_id, { task_id: t.task_id, status: t.status, intent: t.intent, deps });
          }
        }
        return g;
      });
    },
    onRefresh: () => void load(false),
  });

  if (error && !task) {
    return (
      <main>
        <h1>Task {id}</h1>
        <ErrorBox error={error} title="Could not load the task" />
        <p>
          <a href="#/">Back to the task list</a>
        </p>
      </main>
    );
  }
  if (!task) {
    return (
      <main>
        <h1>Task {id}</h1>
        <Loading />
      </main>
    );
  }
  let spec = '';
  try {
    spec = JSON.stringify(JSON.parse(task.spec_json), null, 2);
  } catch {
    spec = task.spec_json;
  }
  return (
    <main>
      <p class="crumbs">
        <a href="#/">Tasks</a> / {task.task_id}
      </p>
      <div class="title-row">
        <h1>
          {task.task_id} <StateBadge state={task.status} />
        </h1>
        <Actions task={task} onDone={() => void load(false)} />
      </div>
      <ErrorBox error={error} title="Refresh failed (showing the last known state)" />
      <Kv
        items={[
          ['Intent', <code>{task.intent}</code>],
          ['Created', <When us={task.created_at_us} />],
          ['Start timeout', task.start_timeout_s === '0' ? 'none (waits for ever)' : `${task.start_timeout_s} s`],
          ...(task.held_by ? ([['Held by', <span data-testid="held-by">{task.held_by}</span>]] as [string, preact.JSX.Element][]) : []),
          ['Metadata', <Chips map={task.metadata} />],
          ...(task.compensates
            ? ([['Compensates', <a href={TaskHref(task.compensates)}>{task.compensates}</a>]] as [string, preact.JSX.Element][])
            : []),
        ]}
      />
      <Rollout task={task} onDone={() => void load(false)} />
      <Why task={task} graph={graph} />
      <section aria-labelledby="dag-h">
        <h2 id="dag-h">Dependencies</h2>
        <Legend />
        <ErrorBox error={graphError} title="Could not load the graph" />
        {graph ? (
          graph.size === 1 ? (
            <>
              <Dag tasks={graph} focus={id} />
              <p class="muted">No dependencies and no dependents.</p>
            </>
          ) : (
            <Dag tasks={graph} focus={id} />
          )
        ) : (
          !graphError && <Loading />
        )}
        {truncated.length > 0 && <p class="muted">Left out: {truncated.join('; ')}.</p>}
      </section>
      <section aria-labelledby="rows-h">
        <h2 id="rows-h">Per node</h2>
        <NodeRows rows={task.nodes} batches={!!task.rollout} />
      </section>
      <section aria-labelledby="tl-h">
        <h2 id="tl-h">Timeline</h2>
        <Timeline entries={events} />
      </section>
      <details class="spec">
        <summary>Spec</summary>
        <pre>{spec}</pre>
      </details>
    </main>
  );
}

// Whether a task with these deps is downstream of `root` in `g` (some dep
// is the root or itself depends, transitively, on the root).
function IsDownstream(g: Map<string, GraphTask>, deps: string[], root: string): boolean {
  const seen = new Set<string>();
  const reaches = (id: string): boolean => {
    if (id === root) return true;
    if (seen.has(id)) return false;
    seen.add(id);
    return (g.get(id)?.deps ?? []).some(reaches);
  };
  return deps.some(reaches);
}
