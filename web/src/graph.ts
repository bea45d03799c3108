// The dependency graph around one task: its upstream (depends_on, followed
// to the roots) and its downstream (tasks that depend on it, directly or
// not). The API has no "dependents" call, so downstream is found among the
// tasks created at or after this one, newest first, up to kMaxCandidates;
// specs never change, so each is fetched once (SpecCache).

import { Api, ApiError } from './api';
import type { ListTasksResponse, Task, TaskSpecJson } from './types';

const kMaxUpstream = 100;
const kMaxCandidates = 200;
const kConcurrency = 4;

export interface GraphTask {
  task_id: string;
  status: string; // '' when the task is not in the store
  intent: string;
  deps: string[];
}

export function DepsOf(task: Task): string[] {
  if (!task.spec_json) return [];
  try {
    const spec = JSON.parse(task.spec_json) as TaskSpecJson;
    return Array.isArray(spec.depends_on) ? spec.depends_on : [];
  } catch {
    return [];
  }
}

// Full tasks by id (GetTask answers), shared by the loads of one page.
export class TaskCache {
  private tasks = new Map<string, Task | null>(); // null: not found

  Put(t: Task): void {
    if (t.spec_json) this.tasks.set(t.task_id, t);
  }

  Peek(id: string): Task | null | undefined {
    return this.tasks.get(id);
  }

  async Get(id: string, fresh = false): Promise<Task | null> {
    if (!fresh && this.tasks.has(id)) return this.tasks.get(id)!;
    try {
      const t = await Api<Task>(`api/v1/tasks/${encodeURIComponent(id)}`);
      this.tasks.set(id, t);
      return t;
    } catch (e) {
      if (e instanceof ApiError && e.code === 'NOT_FOUND') {
        this.tasks.set(id, null);
        return null;
      }
      throw e;
    }
  }
}

async function Pool<T>(items: T[], f: (x: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await f(items[next++]);
  };
  await Promise.all(Array.from({ length: Math.min(kConcurrency, items.length) }, worker));
}

export interface Neighbourhood {
  tasks: Map<string, GraphTask>;
  truncated: string[]; // what was left out, for the operator
}

function ToGraph(t: Task): GraphTask {
  return { task_id: t.task_id, status: t.status, intent: t.intent, deps: DepsOf(t) };
}

export async function LoadNeighbourhood(root: Task, cache: TaskCache): Promise<Neighbourhood> {
  cache.Put(root);
  const out = new Map<string, GraphTask>([[root.task_id, ToGraph(root)]]);
  const truncated: string[] = [];

  // Upstream: breadth-first over depends_on.
  let frontier = DepsOf(root);
  while (frontier.length > 0) {
    const todo = [...new Set(frontier)].filter((id) => !out.has(id));
    if (out.size + todo.length > kMaxUpstream) {
      truncated.push(`upstream past ${kMaxUpstream} tasks`);
      break;
    }
    const found: Task[] = [];
    await Pool(todo, async (id) => {
      const t = await cache.Get(id, true);
      if (t) found.push(t);
      else out.set(id, { task_id: id, status: '', intent: 'not in the store', deps: [] });
    });
    frontier = [];
    for (const t of found) {
      const g = ToGraph(t);
      out.set(t.task_id, g);
      frontier.push(...g.deps);
    }
  }

  // Downstream: candidates created at or after the root.
  const candidates: Task[] = [];
  let token = '';
  const rootCreated = Number(root.created_at_us);
  for (;;) {
    const page = await Api<ListTasksResponse>('api/v1/tasks', { query: { limit: 100, page_token: token } });
    let older = false;
    for (const t of page.tasks) {
      if (Number(t.created_at_us) < rootCreated) {
        older = true;
        break;
      }
      if (t.task_id !== root.task_id) candidates.push(t);
    }
    if (older || !page.next_page_token) break;
    if (candidates.length >= kMaxCandidates) {
      truncated.push(`downstream: only the ${kMaxCandidates} newest tasks were searched`);
      break;
    }
    token = page.next_page_token;
  }
  const specs = new Map<string, Task>();
  await Pool(candidates.slice(0, kMaxCandidates), async (c) => {
    const t = cache.Peek(c.task_id) ?? (await cache.Get(c.task_id));
    if (t) specs.set(t.task_id, { ...t, status: c.status });
  });
  const down = new Set([root.task_id]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const t of specs.values()) {
      if (down.has(t.task_id)) continue;
      if (DepsOf(t).some((d) => down.has(d))) {
        down.add(t.task_id);
        grew = true;
        if (!out.has(t.task_id)) out.set(t.task_id, ToGraph(t));
      }
    }
  }
  return { tasks: out, truncated };
}
