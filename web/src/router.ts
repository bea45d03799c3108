// Hash routing (#/tasks/ID): the orchestrator serves static files only, so
// every page is index.html and the route lives after the '#'.

import { useEffect, useState } from 'preact/hooks';

export interface Route {
  page: 'tasks' | 'task' | 'submit' | 'nodes' | 'alerts' | 'dead-letters' | 'bus' | 'not-found';
  id: string; // the task id of 'task'
  query: URLSearchParams;
}

export function ParseHash(hash: string): Route {
  const raw = hash.replace(/^#/, '') || '/';
  const [path, qs = ''] = raw.split('?', 2);
  const query = new URLSearchParams(qs);
  const parts = path.split('/').filter(Boolean);
  const none = { id: '', query };
  if (parts.length === 0) return { page: 'tasks', ...none };
  if (parts[0] === 'tasks' && parts.length === 1) return { page: 'tasks', ...none };
  if (parts[0] === 'tasks' && parts.length === 2) {
    return { page: 'task', id: decodeURIComponent(parts[1]), query };
  }
  if (parts.length === 1 && ['submit', 'nodes', 'alerts', 'dead-letters', 'bus'].includes(parts[0])) {
    return { page: parts[0] as Route['page'], ...none };
  }
  return { page: 'not-found', ...none };
}

export function TaskHref(id: string): string {
  return `#/tasks/${encodeURIComponent(id)}`;
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => ParseHash(location.hash));
  useEffect(() => {
    const on = () => setRoute(ParseHash(location.hash));
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return route;
}
