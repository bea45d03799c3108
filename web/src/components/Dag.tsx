// The dependency graph as SVG, laid out by dagre (left to right: a task
// after what it depends on). Each box is a link to its task, coloured by
// its state; the task in focus has a thick outline.

import dagre from '@dagrejs/dagre';
import { useMemo } from 'preact/hooks';
import type { GraphTask } from '../graph';
import { TaskHref } from '../router';
import { LookOf } from '../states';

const kCharW = 7.4;
const kNodeH = 46;

interface Laid {
  width: number;
  height: number;
  nodes: { t: GraphTask; x: number; y: number; w: number; h: number }[];
  edges: { from: string; to: string; points: { x: number; y: number }[] }[];
}

function Layout(tasks: Map<string, GraphTask>): Laid {
  const g = new dagre.graphlib.Graph();
  g.setGraph({ rankdir: 'LR', nodesep: 18, ranksep: 48, marginx: 8, marginy: 8 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const t of tasks.values()) {
    const label = Math.max(t.task_id.length, `${t.status || 'UNKNOWN'} · ${t.intent}`.length);
    g.setNode(t.task_id, { width: Math.min(260, Math.max(110, label * kCharW + 20)), height: kNodeH });
  }
  for (const t of tasks.values()) {
    for (const d of t.deps) if (tasks.has(d)) g.setEdge(d, t.task_id);
  }
  dagre.layout(g);
  const graph = g.graph();
  return {
    width: graph.width ?? 0,
    height: graph.height ?? 0,
    nodes: g.nodes().map((id) => {
      const n = g.node(id);
      return { t: tasks.get(id)!, x: n.x, y: n.y, w: n.width, h: n.height };
    }),
    edges: g.edges().map((e) => ({ from: e.v, to: e.w, points: g.edge(e).points ?? [] })),
  };
}

function Clip(s: string, w: number): string {
  const max = Math.floor((w - 16) / kCharW);
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

export function Dag({ tasks, focus }: { tasks: Map<string, GraphTask>; focus: string }) {
  // Re-laid out only when the shape changes, not on each state change.
  const shape = [...tasks.values()].map((t) => `${t.task_id}<${t.deps.join(',')}`).join(';');
  const laid = useMemo(() => Layout(tasks), [shape]);
  return (
    <div class="dag-wrap">
      <svg
        class="dag"
        role="img"
        aria-label={`Dependency graph of ${focus}: ${tasks.size} task(s)`}
        viewBox={`0 0 ${laid.width} ${laid.height}`}
        width={laid.width}
        height={laid.height}
        data-testid="dag"
      >
        <defs>
          <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
            <path d="M 0 0 L 10 5 L 0 10 z" fill="#6b7380" />
          </marker>
        </defs>
        {laid.edges.map((e) => (
          <path
            key={`${e.from}->${e.to}`}
            class="edge"
            data-from={e.from}
            data-to={e.to}
            d={e.points.map((p, i) => `${i ? 'L' : 'M'} ${p.x} ${p.y}`).join(' ')}
            marker-end="url(#arrow)"
          />
        ))}
        {laid.nodes.map(({ t, x, y, w, h }) => {
          const cur = tasks.get(t.task_id) ?? t;
          const look = LookOf(cur.status);
          return (
            <a
              key={t.task_id}
              href={TaskHref(t.task_id)}
              class={`dag-node${t.task_id === focus ? ' focus' : ''}`}
              data-task-id={t.task_id}
              data-state={cur.status}
              aria-label={`${t.task_id}: ${cur.status || 'not in the store'}`}
            >
              <rect x={x - w / 2} y={y - h / 2} width={w} height={h} rx="6" fill={cur.status ? look.color : '#fff'} stroke-dasharray={cur.status ? undefined : '4 3'} />
              <text x={x} y={y - 4} text-anchor="middle" fill={look.text} class="dag-id">
                {Clip(t.task_id, w)}
              </text>
              <text x={x} y={y + 13} text-anchor="middle" fill={look.text} class="dag-sub">
                {Clip(`${cur.status || 'UNKNOWN'} · ${cur.intent}`, w)}
              </text>
              <title>{`${t.task_id}\n${cur.status || 'not in the store'}\nintent ${cur.intent}`}</title>
            </a>
          );
        })}
      </svg>
    </div>
  );
}
