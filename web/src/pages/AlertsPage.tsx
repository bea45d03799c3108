// Alerts, newest first, filtered by kind and node on the server. The API
// pages oldest first (after_id), so the page walks to the end (up to
// kMaxAlerts) and shows the newest.

import { useState } from 'preact/hooks';
import { Api } from '../api';
import { Empty, ErrorBox, Loading, StateBadge, When } from '../components/common';
import { usePolling } from '../hooks';
import { TaskHref } from '../router';
import type { Alert, ListAlertsResponse } from '../types';

const kMaxAlerts = 5000;
const kShown = 200;
const kRefreshMs = 5000;

export function AlertsPage() {
  const [alerts, setAlerts] = useState<Alert[] | null>(null);
  const [capped, setCapped] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const [kind, setKind] = useState('');
  const [node, setNode] = useState('');

  const refresh = usePolling(
    async () => {
      try {
        const all: Alert[] = [];
        let after = '0';
        for (;;) {
          const r = await Api<ListAlertsResponse>('api/v1/alerts', {
            query: { after_id: after, limit: 500, kind, node_id: node },
          });
          all.push(...r.alerts);
          if (!r.more || all.length >= kMaxAlerts || r.next_after_id === after) {
            setCapped(r.more);
            break;
          }
          after = r.next_after_id;
        }
        setAlerts(all.reverse());
        setError(null);
      } catch (e) {
        setError(e);
      }
    },
    kRefreshMs,
    [kind, node],
  );

  return (
    <main>
      <h1>Alerts</h1>
      <form
        class="filters"
        onSubmit={(e) => {
          e.preventDefault();
          refresh();
        }}
      >
        <label>
          Kind
          <input value={kind} onChange={(e) => setKind((e.target as HTMLInputElement).value.trim())} placeholder="e.g. circuit_open" />
        </label>
        <label>
          Node
          <input value={node} onChange={(e) => setNode((e.target as HTMLInputElement).value.trim())} placeholder="node id" />
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
            {alerts.length}
            {capped ? '+' : ''} alert(s), newest first{alerts.length > kShown ? `; the newest ${kShown} shown` : ''}.
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
