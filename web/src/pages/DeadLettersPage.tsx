// The bus's dead-letter queue: events it could not apply, with replay (once
// the cause is fixed) and drop (give up: applied as is, then removed).

import { useState } from 'preact/hooks';
import { Api } from '../api';
import { Empty, ErrorBox, Loading, NeedsRole, When } from '../components/common';
import { usePolling } from '../hooks';
import { TaskHref } from '../router';
import type { DeadLetter, ListDeadLettersResponse, ReplayDeadLettersResponse } from '../types';
import { useCan } from '../whoami';

const kRefreshMs = 5000;
const kPage = 100;

function Pretty(json: string): string {
  try {
    return JSON.stringify(JSON.parse(json), null, 2);
  } catch {
    return json;
  }
}

export function DeadLettersPage() {
  const [letters, setLetters] = useState<ListDeadLettersResponse | null>(null);
  const [after, setAfter] = useState<string[]>(['0']);
  const [error, setError] = useState<unknown>(null);
  const [actionError, setActionError] = useState<unknown>(null);
  const [note, setNote] = useState('');
  const [busy, setBusy] = useState(false);
  // Replay and drop need an admin token.
  const can = useCan('admin');
  const gate = {
    title: can.reason || undefined,
    'aria-describedby': can.allowed ? undefined : 'dlq-needs',
  };

  const refresh = usePolling(
    async () => {
      try {
        setLetters(await Api<ListDeadLettersResponse>('api/v1/dead-letters', { query: { after_id: after[after.length - 1], limit: kPage } }));
        setError(null);
      } catch (e) {
        setError(e);
      }
    },
    kRefreshMs,
    [after.join(',')],
  );

  const act = async (what: string, f: () => Promise<string>) => {
    setBusy(true);
    setActionError(null);
    setNote('');
    try {
      setNote(await f());
    } catch (e) {
      setActionError({ what, e });
    } finally {
      setBusy(false);
      refresh();
    }
  };
  const replay = (l: DeadLetter | null) =>
    act(l ? `Replay of letter ${l.id}` : 'Replay of every letter', async () => {
      const r = await Api<ReplayDeadLettersResponse>('api/v1/dead-letters/replay', {
        method: 'POST',
        body: JSON.stringify(l ? { id: l.id } : { all: true }),
      });
      return `${l ? `Letter ${l.id}: ` : ''}replayed ${r.replayed}, ${r.remaining} left in the queue.`;
    });
  const drop = (l: DeadLetter) => {
    if (!window.confirm(`Drop letter ${l.id}? Its event is applied as is (recorded as malformed or unknown) and the letter removed.`)) return;
    void act(`Drop of letter ${l.id}`, async () => {
      await Api(`api/v1/dead-letters/${l.id}/drop`, { method: 'POST', body: '{}' });
      return `Letter ${l.id} dropped.`;
    });
  };

  const list = letters?.letters ?? [];
  const failed = actionError as { what: string; e: unknown } | null;
  return (
    <main>
      <div class="title-row">
        <h1>Dead letters</h1>
        <span class="row">
          <NeedsRole perm={can} id="dlq-needs" />
          <button type="button" disabled={busy || list.length === 0 || !can.allowed} {...gate} onClick={() => void replay(null)}>
            Replay all
          </button>
        </span>
      </div>
      <p class="muted">
        Events the bus could not apply (e.g. about a task the store does not know). Fix the cause, then replay; a letter
        whose cause stands stays. Drop gives up on it.
      </p>
      {note && (
        <div class="note" role="status" data-testid="dlq-note">
          {note}
        </div>
      )}
      {failed && <ErrorBox error={failed.e} title={`${failed.what} refused`} />}
      <ErrorBox error={error} title="Could not list dead letters" />
      {!letters && !error && <Loading />}
      {letters && list.length === 0 && <Empty>No dead letters: every event was applied.</Empty>}
      {list.length > 0 && (
        <table data-testid="dead-letters">
          <thead>
            <tr>
              <th scope="col" class="num">Id</th>
              <th scope="col">Parked</th>
              <th scope="col">Task</th>
              <th scope="col">Node</th>
              <th scope="col">Event</th>
              <th scope="col" class="num">Deliveries</th>
              <th scope="col">Reason</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {list.map((l) => (
              <tr key={l.id} data-letter-id={l.id} data-task-id={l.task_id}>
                <td class="num">{l.id}</td>
                <td>
                  <When us={l.parked_at_us} />
                </td>
                <td>{l.task_id ? <a href={TaskHref(l.task_id)}>{l.task_id}</a> : <span class="muted">—</span>}</td>
                <td>{l.node_id}</td>
                <td>
                  <code>{l.event_type}</code> <span class="muted">{l.event_id}</span>
                  <details>
                    <summary>event</summary>
                    <pre>{Pretty(l.event_json)}</pre>
                  </details>
                </td>
                <td class="num">{l.deliveries}</td>
                <td class="reason">{l.reason}</td>
                <td class="row-actions">
                  <button type="button" disabled={busy || !can.allowed} {...gate} onClick={() => void replay(l)}>
                    Replay
                  </button>
                  <button type="button" class="danger" disabled={busy || !can.allowed} {...gate} onClick={() => drop(l)}>
                    Drop
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div class="pager">
        <button type="button" disabled={after.length <= 1} onClick={() => setAfter(after.slice(0, -1))}>
          ← First
        </button>
        <button
          type="button"
          disabled={!letters?.more || list.length === 0}
          onClick={() => setAfter([...after, list[list.length - 1].id])}
        >
          Next →
        </button>
      </div>
    </main>
  );
}
