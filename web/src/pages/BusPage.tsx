// The event bus (backend, per-partition lag, dead letters) and the intents
// (circuit breakers, the dispatch queue, the retry budget).

import { useState } from 'preact/hooks';
import { Api } from '../api';
import { Empty, ErrorBox, Loading, StateBadge, When } from '../components/common';
import { usePolling } from '../hooks';
import { kBreaker } from '../states';
import type { BusStatusResponse, ListIntentsResponse } from '../types';
import { Duration } from '../time';

const kRefreshMs = 3000;

function Bus({ bus }: { bus: BusStatusResponse }) {
  const sum = (f: (p: BusStatusResponse['partitions'][number]) => string) =>
    bus.partitions.reduce((a, p) => a + Number(f(p)), 0);
  const pending = sum((p) => p.pending);
  const oldest = Math.max(0, ...bus.partitions.map((p) => Number(p.oldest_unapplied_ms)));
  return (
    <>
      <p class="summary" data-testid="bus-summary">
        Backend <code>{bus.backend}</code> · {bus.partitions.length} partitions · {sum((p) => p.published)} published,{' '}
        {sum((p) => p.applied)} applied, <span class={pending ? 'warn' : ''}>{pending} pending</span>
        {oldest > 0 && <> (oldest {Duration(oldest)})</>} ·{' '}
        <a href="#/dead-letters" class={Number(bus.dead_letters) ? 'warn' : ''}>
          {bus.dead_letters}
          {bus.dead_letters_capped ? '+' : ''} dead letter(s)
        </a>
      </p>
      <details>
        <summary>Partitions</summary>
        <table>
          <thead>
            <tr>
              <th scope="col" class="num">Partition</th>
              <th scope="col" class="num">Published</th>
              <th scope="col" class="num">Applied</th>
              <th scope="col" class="num">Pending</th>
              <th scope="col" class="num">Oldest pending</th>
              <th scope="col" class="num">Dead-lettered</th>
            </tr>
          </thead>
          <tbody>
            {bus.partitions.map((p) => (
              <tr key={p.partition}>
                <td class="num">{p.partition}</td>
                <td class="num">{p.published}</td>
                <td class="num">{p.applied}</td>
                <td class={`num${Number(p.pending) ? ' warn' : ''}`}>{p.pending}</td>
                <td class="num">{Number(p.oldest_unapplied_ms) ? Duration(Number(p.oldest_unapplied_ms)) : '—'}</td>
                <td class="num">{p.dead_lettered}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </>
  );
}

function Intents({ it }: { it: ListIntentsResponse }) {
  const depth = Number(it.queue_depth);
  const cap = Number(it.queue_capacity);
  const fill = cap ? depth / cap : 0;
  return (
    <>
      <div class="queue" data-testid="queue">
        <span>
          Dispatch queue: {depth} / {cap}
          {it.queue_paused && (
            <strong class="warn"> — paused (new submits are refused until it drains)</strong>
          )}
        </span>
        <meter min={0} max={1} low={0.5} high={0.8} optimum={0} value={fill} aria-label="queue fill" />
        <span class="muted">
          Retry budget: {it.retry_budget_taken} re-dispatches allowed, {it.retry_budget_refused} held back
        </span>
      </div>
      {it.intents.length === 0 ? (
        <Empty>No intent has finished a task yet: breakers appear once one has.</Empty>
      ) : (
        <table data-testid="intents">
          <thead>
            <tr>
              <th scope="col">Intent</th>
              <th scope="col">Breaker</th>
              <th scope="col" class="num">Consecutive failures</th>
              <th scope="col" class="num">Times opened</th>
              <th scope="col">Opened at</th>
            </tr>
          </thead>
          <tbody>
            {it.intents.map((i) => (
              <tr key={i.intent} data-intent={i.intent}>
                <td>
                  <code>{i.intent}</code>
                </td>
                <td>
                  <StateBadge state={kBreaker[i.breaker] ?? ''} label={i.breaker} />
                </td>
                <td class="num">{i.consecutive_failures}</td>
                <td class="num">{i.times_opened}</td>
                <td>{Number(i.opened_at_us) ? <When us={i.opened_at_us} /> : <span class="muted">—</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}

export function BusPage() {
  const [bus, setBus] = useState<BusStatusResponse | null>(null);
  const [intents, setIntents] = useState<ListIntentsResponse | null>(null);
  const [busError, setBusError] = useState<unknown>(null);
  const [intentsError, setIntentsError] = useState<unknown>(null);
  usePolling(async () => {
    await Promise.all([
      Api<BusStatusResponse>('api/v1/bus').then(
        (b) => (setBus(b), setBusError(null)),
        (e) => setBusError(e),
      ),
      Api<ListIntentsResponse>('api/v1/intents').then(
        (i) => (setIntents(i), setIntentsError(null)),
        (e) => setIntentsError(e),
      ),
    ]);
  }, kRefreshMs);
  return (
    <main>
      <h1>Bus & intents</h1>
      <section aria-labelledby="bus-h">
        <h2 id="bus-h">Event bus</h2>
        <ErrorBox error={busError} title="Could not read the bus status" />
        {bus ? <Bus bus={bus} /> : !busError && <Loading />}
      </section>
      <section aria-labelledby="int-h">
        <h2 id="int-h">Intents, queue and retry budget</h2>
        <ErrorBox error={intentsError} title="Could not list intents" />
        {intents ? <Intents it={intents} /> : !intentsError && <Loading />}
      </section>
      <p class="muted">Refreshed every {kRefreshMs / 1000} s.</p>
    </main>
  );
}
