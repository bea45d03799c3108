// The landing page: tasks, newest first, with filters (state and intent on
// the server, metadata key=value on the server, text on the loaded page),
// paging, and live updates from the feed.

import { useEffect, useRef, useState } from 'preact/hooks';
import { Api } from '../api';
import { Chips, Empty, ErrorBox, Legend, StateBadge, When } from '../components/common';
import { useFeed } from '../hooks';
import { TaskHref } from '../router';
import { kStateOrder } from '../states';
import type { ListTasksResponse, Task } from '../types';
import { LocalTime } from '../time';

const kPageSize = 50;

interface Filters {
  status: string;
  intent: string;
  meta: string; // "key=value"
  q: string;
}

function FiltersOf(query: URLSearchParams): Filters {
  return {
    status: query.get('status') ?? '',
    intent: query.get('intent') ?? '',
    meta: query.get('meta') ?? '',
    q: query.get('q') ?? '',
  };
}

function HashOf(f: Filters): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(f)) if (v) q.set(k, v);
  const s = q.toString();
  return s ? `#/tasks?${s}` : '#/';
}

function Matches(t: Task, f: Filters): boolean {
  if (f.status && t.status !== f.status) return false;
  if (f.intent && t.intent !== f.intent) return false;
  const [k, v] = f.meta.split('=', 2);
  if (k && (t.metadata ?? {})[k] !== (v ?? '')) return false;
  return true;
}

function Found(t: Task, q: string): boolean {
  if (!q) return true;
  const needle = q.toLowerCase();
  const hay = [t.task_id, t.intent, ...Object.entries(t.metadata ?? {}).map(([k, v]) => `${k}=${v}`)];
  return hay.some((h) => h.toLowerCase().includes(needle));
}

export function TasksPage({ query }: { query: URLSearchParams }) {
  const filters = FiltersOf(query);
  const [draft, setDraft] = useState(filters);
  // Page tokens of the pages up to this one ('' = the first page), for the
  // filters they were made with.
  const [paging, setPaging] = useState({ key: '', tokens: [''] });
  const [page, setPage] = useState<ListTasksResponse | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [updated, setUpdated] = useState(0);
  const seq = useRef(0);
  // Statuses the stream delivered while a list fetch was in flight: the
  // fetch read the list before them, so they win over its answer.
  const streamed = useRef(new Map<string, string>());
  const refetchTimer = useRef<number | undefined>(undefined);
  const key = `${filters.status}|${filters.intent}|${filters.meta}`;
  const tokens = paging.key === key ? paging.tokens : [''];
  const setTokens = (t: string[]) => setPaging({ key, tokens: t });
  const token = tokens[tokens.length - 1];

  const load = async () => {
    const my = ++seq.current;
    streamed.current.clear();
    const [mk, mv] = filters.meta.split('=', 2);
    try {
      const resp = await Api<ListTasksResponse>('api/v1/tasks', {
        query: {
          status: filters.status,
          intent: filters.intent,
          limit: kPageSize,
          page_token: token,
          ...(mk ? { [`metadata.${mk}`]: mv ?? '' } : {}),
        },
      });
      if (my !== seq.current) return;
      const newer = streamed.current;
      setPage({
        ...resp,
        tasks: resp.tasks.map((t) => (newer.has(t.task_id) ? { ...t, status: newer.get(t.task_id)! } : t)),
      });
      setError(null);
      setUpdated(Date.now());
    } catch (e) {
      if (my === seq.current) setError(e);
    }
  };

  useEffect(() => setDraft(filters), [key, filters.q]);
  useEffect(() => {
    void load();
  }, [key, token]);

  useFeed({
    onTask: (t) => {
      streamed.current.set(t.task_id, t.status);
      setPage((p) => {
        if (!p) return p;
        const i = p.tasks.findIndex((x) => x.task_id === t.task_id);
        if (i < 0) {
          // A new task: on the first page it belongs at the top.
          if (token === '' && Matches(t, filters)) {
            window.clearTimeout(refetchTimer.current);
            refetchTimer.current = window.setTimeout(() => void load(), 250);
          }
          return p;
        }
        const tasks = p.tasks.slice();
        tasks[i] = { ...tasks[i], status: t.status };
        return { ...p, tasks };
      });
      setUpdated(Date.now());
    },
    onRefresh: () => void load(),
  });
  useEffect(() => () => window.clearTimeout(refetchTimer.current), []);

  const apply = (e: Event) => {
    e.preventDefault();
    location.hash = HashOf(draft);
  };
  const rows = (page?.tasks ?? []).filter((t) => Found(t, filters.q));
  const filtered = filters.status || filters.intent || filters.meta || filters.q;

  return (
    <main>
      <div class="title-row">
        <h1>Tasks</h1>
        <a class="button primary" href="#/submit">
          Submit a task file
        </a>
      </div>
      <form class="filters" onSubmit={apply} aria-label="Filter tasks">
        <label>
          State
          <select
            value={draft.status}
            onChange={(e) => {
              const f = { ...draft, status: (e.target as HTMLSelectElement).value };
              setDraft(f);
              location.hash = HashOf(f);
            }}
          >
            <option value="">any</option>
            {kStateOrder.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Intent (exact)
          <input value={draft.intent} onInput={(e) => setDraft({ ...draft, intent: (e.target as HTMLInputElement).value })} placeholder="e.g. exec" />
        </label>
        <label>
          Metadata
          <input value={draft.meta} onInput={(e) => setDraft({ ...draft, meta: (e.target as HTMLInputElement).value })} placeholder="key=value" />
        </label>
        <label>
          Find in this page
          <input
            type="search"
            value={draft.q}
            onInput={(e) => setDraft({ ...draft, q: (e.target as HTMLInputElement).value })}
            placeholder="task id, intent, metadata"
          />
        </label>
        <button type="submit">Apply</button>
        {filtered && (
          <a class="button" href="#/">
            Clear filters
          </a>
        )}
      </form>
      <ErrorBox error={error} title="Could not list tasks" />
      <Legend />
      {page && rows.length === 0 && (
        <Empty>
          {filtered ? (
            <>
              No task matches these filters. <a href="#/">Clear the filters</a>.
            </>
          ) : token ? (
            'This page is empty.'
          ) : (
            <>
              No tasks yet. <a href="#/submit">Submit a task file</a> here, or run{' '}
              <code>apollo-cli task submit --file tasks.yaml</code>.
            </>
          )}
        </Empty>
      )}
      {rows.length > 0 && (
        <table class="tasks" data-testid="task-table">
          <thead>
            <tr>
              <th scope="col">Task</th>
              <th scope="col">State</th>
              <th scope="col">Intent</th>
              <th scope="col">Created</th>
              <th scope="col">Metadata</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((t) => (
              <tr key={t.task_id} data-task-id={t.task_id}>
                <td>
                  <a href={TaskHref(t.task_id)}>{t.task_id}</a>
                  {t.compensates && (
                    <span class="muted">
                      {' '}
                      compensates <a href={TaskHref(t.compensates)}>{t.compensates}</a>
                    </span>
                  )}
                </td>
                <td>
                  <StateBadge state={t.status} />
                </td>
                <td>{t.intent}</td>
                <td>
                  <When us={t.created_at_us} />
                </td>
                <td>
                  <Chips map={t.metadata} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div class="pager">
        <button type="button" disabled={tokens.length <= 1} onClick={() => setTokens(tokens.slice(0, -1))}>
          ← Newer
        </button>
        <span class="muted">
          page {tokens.length}
          {page ? `, ${page.tasks.length} task(s)` : ''}
          {updated ? ` · updated ${LocalTime(updated * 1000).slice(11)}` : ''}
        </span>
        <button
          type="button"
          disabled={!page?.next_page_token}
          onClick={() => page && setTokens([...tokens, page.next_page_token])}
        >
          Older →
        </button>
      </div>
    </main>
  );
}
