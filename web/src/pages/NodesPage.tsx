// Nodes: liveness, connection, mode, labels, groups, intents, last
// heartbeat and running count (ListNodes), refreshed every few seconds.

import { useState } from 'preact/hooks';
import { Api } from '../api';
import { Chips, Empty, ErrorBox, Loading, StateBadge, When } from '../components/common';
import { usePolling } from '../hooks';
import { kLiveness } from '../states';
import type { ListNodesResponse } from '../types';

const kRefreshMs = 3000;

export function NodesPage() {
  const [nodes, setNodes] = useState<ListNodesResponse | null>(null);
  const [error, setError] = useState<unknown>(null);
  usePolling(async () => {
    try {
      setNodes(await Api<ListNodesResponse>('api/v1/nodes'));
      setError(null);
    } catch (e) {
      setError(e);
    }
  }, kRefreshMs);
  const list = nodes?.nodes ?? [];
  const by = (l: string) => list.filter((n) => n.liveness === l).length;
  return (
    <main>
      <h1>Nodes</h1>
      <ErrorBox error={error} title="Could not list nodes" />
      {nodes && (
        <p class="summary">
          {list.length} node(s): {by('ALIVE')} alive, {by('SUSPECT')} suspect, {by('LOST')} lost, {by('NEVER_SEEN')} never
          seen · {list.filter((n) => n.connected).length} connected · refreshed every {kRefreshMs / 1000} s
        </p>
      )}
      {!nodes && !error && <Loading />}
      {nodes && list.length === 0 && (
        <Empty>
          No node has registered yet. Start an agent: <code>edge-agent --node-id NAME --orchestrator HOST:PORT</code>.
        </Empty>
      )}
      {list.length > 0 && (
        <table data-testid="nodes">
          <thead>
            <tr>
              <th scope="col">Node</th>
              <th scope="col">Liveness</th>
              <th scope="col">Connected</th>
              <th scope="col">Mode</th>
              <th scope="col" class="num">Running</th>
              <th scope="col">Last heartbeat</th>
              <th scope="col">Labels</th>
              <th scope="col">Groups</th>
              <th scope="col">Intents</th>
            </tr>
          </thead>
          <tbody>
            {list.map((n) => (
              <tr key={n.node_id} data-node-id={n.node_id}>
                <td>
                  <strong>{n.node_id}</strong>
                </td>
                <td>
                  <StateBadge state={kLiveness[n.liveness] ?? ''} label={n.liveness} />
                </td>
                <td>{n.connected ? 'yes' : <span class="warn">no</span>}</td>
                <td>{n.mode.toUpperCase() === 'NORMAL' ? n.mode : <span class="warn">{n.mode}</span>}</td>
                <td class="num">{n.running}</td>
                <td>
                  <When us={n.last_heartbeat_us} />
                </td>
                <td>
                  <Chips map={n.labels} />
                </td>
                <td>{n.groups.length ? n.groups.join(', ') : <span class="muted">none</span>}</td>
                <td class="intents">
                  {n.intents.join(', ')}
                  {n.disabled_intents.length > 0 && <div class="muted">off: {n.disabled_intents.join(', ')}</div>}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </main>
  );
}
