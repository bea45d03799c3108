// The dashboard: a header (pages, live-update state, access token) and the
// page the hash names. One LiveFeed (the SSE stream) serves every page.

import { render } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { GetToken, SetToken } from './api';
import { FeedContext, useFeedMode } from './hooks';
import { useRoute, type Route } from './router';
import { LiveFeed, kPollMs } from './stream';
import { TasksPage } from './pages/TasksPage';
import { TaskPage } from './pages/TaskPage';
import { SubmitPage } from './pages/SubmitPage';
import { NodesPage } from './pages/NodesPage';
import { AlertsPage } from './pages/AlertsPage';
import { DeadLettersPage } from './pages/DeadLettersPage';
import { BusPage } from './pages/BusPage';
import './style.css';

const kPages: [Route['page'], string, string][] = [
  ['tasks', '#/', 'Tasks'],
  ['submit', '#/submit', 'Submit'],
  ['nodes', '#/nodes', 'Nodes'],
  ['alerts', '#/alerts', 'Alerts'],
  ['dead-letters', '#/dead-letters', 'Dead letters'],
  ['bus', '#/bus', 'Bus & intents'],
];

function FeedIndicator() {
  const [mode, detail] = useFeedMode();
  const text =
    mode === 'live' ? 'live' : mode === 'polling' ? `polling every ${kPollMs / 1000} s` : 'connecting…';
  const title =
    mode === 'live'
      ? 'Updates arrive as they commit (Server-Sent Events).'
      : mode === 'polling'
        ? `The event stream is unavailable (${detail}); refreshing every ${kPollMs / 1000} s and reconnecting.`
        : '';
  return (
    <span class={`feed feed-${mode}`} title={title} data-testid="feed-mode" data-mode={mode}>
      <span class="dot" aria-hidden="true" /> {text}
    </span>
  );
}

function TokenField({ onChange }: { onChange: () => void }) {
  const [open, setOpen] = useState(false);
  const [value, setValue] = useState(GetToken());
  const has = GetToken() !== '';
  const save = (e: Event) => {
    e.preventDefault();
    SetToken(value.trim());
    setOpen(false);
    onChange();
  };
  return (
    <div class="token">
      <button type="button" aria-expanded={open} onClick={() => setOpen(!open)} title="Access token">
        🔑 {has ? 'token set' : 'no token'}
      </button>
      {open && (
        <form class="token-form" onSubmit={save} onKeyDown={(e) => e.key === 'Escape' && setOpen(false)}>
          <label>
            Access token (sent as <code>Authorization: Bearer</code>, kept in this browser)
            <input
              type="password"
              autoComplete="off"
              value={value}
              onInput={(e) => setValue((e.target as HTMLInputElement).value)}
              placeholder="apollo-…"
              autoFocus
            />
          </label>
          <div class="row">
            <button type="submit">Save</button>
            <button type="button" onClick={() => { setValue(''); SetToken(''); setOpen(false); onChange(); }}>
              Clear
            </button>
          </div>
        </form>
      )}
    </div>
  );
}

function Page({ route, epoch }: { route: Route; epoch: number }) {
  switch (route.page) {
    case 'tasks':
      return <TasksPage key={`tasks-${epoch}`} query={route.query} />;
    case 'task':
      return <TaskPage key={`task-${route.id}-${epoch}`} id={route.id} />;
    case 'submit':
      return <SubmitPage />;
    case 'nodes':
      return <NodesPage key={epoch} />;
    case 'alerts':
      return <AlertsPage key={epoch} />;
    case 'dead-letters':
      return <DeadLettersPage key={epoch} />;
    case 'bus':
      return <BusPage key={epoch} />;
    default:
      return (
        <main>
          <h1>No such page</h1>
          <p>
            <a href="#/">Go to the task list</a>.
          </p>
        </main>
      );
  }
}

function App() {
  const route = useRoute();
  const feed = useMemo(() => new LiveFeed(), []);
  // Bumped when the token changes: pages remount and fetch again.
  const [epoch, setEpoch] = useState(0);
  useEffect(() => {
    feed.Start();
    return () => feed.Stop();
  }, [feed]);
  const current = route.page === 'task' ? 'tasks' : route.page;
  return (
    <FeedContext.Provider value={feed}>
      <header class="top">
        <a class="brand" href="#/">
          Apollo-11
        </a>
        <nav aria-label="Pages">
          {kPages.map(([page, href, label]) => (
            <a key={page} href={href} aria-current={current === page ? 'page' : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <span class="spacer" />
        <FeedIndicator />
        <TokenField
          onChange={() => {
            feed.Restart();
            setEpoch((n) => n + 1);
          }}
        />
      </header>
      <Page route={route} epoch={epoch} />
    </FeedContext.Provider>
  );
}

render(<App />, document.getElementById('app')!);
