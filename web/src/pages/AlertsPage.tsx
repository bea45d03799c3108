// Alerts, newest first, filtered by kind and node on the server. The API
// pages oldest first (after_id) and alerts are only appended, so the page
// reads forward from the last id it has seen: a first visit walks the table
// (kPagesPerPoll pages per refresh, saying so until it is through), later
// refreshes fetch only the new ones. The newest kKept are kept.
//
// The filter inputs are a draft until Apply; a refresh asked for while one
// is in flight (Apply during the first walk) runs right after it, with the
// filters as they are then, never dropped until the next poll.

import { useRef, useState } from 'preact/hooks';
import { Api } from '../api';
import { Empty, ErrorBox, Loading, StateBadge, When } from '../components/common';
import { usePolling } from '../hooks';
import { TaskHref } from '../router';
import type { Alert, ListAlertsResponse } from '../types';

const kKept = 2000;
const kShown = 200;
const kPageSize = 500;
const kPagesPerPoll = 20;
const kRefreshMs = 5000;

interface Seen {
  filters: string;
  after: string; // the last id examined
  alerts: Alert[]; // oldest first
  total: number; // every alert read, kept or not
  caughtUp: boolean;
}

export function AlertsPage() {
  const [seen, setSeen] = useState<Seen | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [draft, setDraft] = useState({ kind: '', node: '' });
  const [applied, setApplied] = useState({ kind: '', node: '' });
  const { kind, node } = applied;
  // The latest walk's result, for a re-run queued while it was in flight:
  // that re-run starts before the render that would show it `seen`.
  const last = useRef<Seen | null>(null);
  const busy = useRef(false);
  const again = useRef(false);
  const filters = `${kind}|${node}`;

  const refresh = usePolling(
    async () => {
      if (busy.current) {
        again.current = true;
        return;
      }
      busy.current = true;
      try {
        const prev = last.current && last.current.filters === filters ? last.current : { filters, after: '0', alerts: [], total: 0, caughtUp: false };
        let { after, alerts, total } = prev;
        let caughtUp = false;
        for (let i = 0; i < kPagesPerPoll; i++) {
          const r = await Api<ListAlertsResponse>('api/v1/alerts', {
            query: { after_id: after, limit: kPageSize, kind, node_id: node },
          });
          alerts = alerts.concat(r.alerts).slice(-kKept);
          total += r.alerts.length;
          const next = r.next_after_id && r.next_after_id !== '0' ? r.next_after_id : after;
          if (!r.more || next === after) {
            caughtUp = true;
            after = next;
            break;
          }
          after = next;
        }
        last.current = { filters, after, alerts, total, caughtUp };
        setSeen(last.current);
        setError(null);
      } catch (e) {
        setError(e);
      } finally {
        busy.current = false;
        if (again.current) {
          again.current = false;
          refresh();
        }
      }
    },
    kRefreshMs,
    [filters],
  );

  const current = seen && seen.filters === filters ? seen : null;
  const alerts = current ? current.alerts.slice().reverse() : null;
  return (
    <main>
      <h1>Alerts</h1>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          const next = { kind: draft.kind.trim(), node: draft.node.trim() };
          // New filters re-run the poll (its deps); the same ones refresh now.
          if (next.kind === kind && next.node === node) refresh();
          else setApplied(next);
        }}
      >
        <label>
          Kind
          <input value={draft.kind} onInput={(e) => setDraft({ ...draft, kind: (e.target as HTMLInputElement).value })} placeholder="e.g. circuit_open" />
        </label>
        <label>
          Node
          <input value={draft.node} onInput={(e) => setDraft({ ...draft, node: (e.target as HTMLInputElement).value })} placeholder="node id" />
        </label>
        <button type="submit">Apply</button>
      </form>
      <ErrorBox error={error} title="Could not list alerts" />
      {!alerts && !error && <Loading />}
      {alerts && alerts.length === 0 && (
        <Empty>{kind || node ? 'No alert matches these filters.' : 'No alerts. Nothing needs you right now.'}</Empty>
      )}
      {alerts && alerts.length > 0 && (
        <>
          <p class="summary">
            {current!.total} alert(s){current!.caughtUp ? '' : ' so far (still reading: newer ones follow)'}, newest first
            {alerts.length > kShown ? `; the newest ${kShown} shown` : ''}.
          </p>
          <table data-testid="alerts">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Kind</th>
                <th scope="col">Task</th>
                <th scope="col">Node</th>
                <th scope="col">Transition</th>
                <th scope="col">Message</th>
                <th scope="col">Webhook</th>
              </tr>
            </thead>
            <tbody>
              {alerts.slice(0, kShown).map((a) => (
                <tr key={a.id} data-alert-id={a.id}>
                  <td>
                    <When us={a.at_us} />
                  </td>
                  <td>
                    <code>{a.kind}</code>
                  </td>
                  <td>{a.task_id ? <a href={TaskHref(a.task_id)}>{a.task_id}</a> : <span class="muted">—</span>}</td>
                  <td>{a.node_id || <span class="muted">—</span>}</td>
                  <td>
                    {a.from_status || a.to_status ? (
                      <>
                        <StateBadge state={a.from_status} /> → <StateBadge state={a.to_status} />
                      </>
                    ) : (
                      <span class="muted">—</span>
                    )}
                  </td>
                  <td>{a.message}</td>
                  <td>
                    {a.delivery || 'off'}
                    {a.delivery_attempts > 0 && <span class="muted"> ({a.delivery_attempts} tries{a.delivery_detail ? `, ${a.delivery_detail}` : ''})</span>}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </main>
  );
}
