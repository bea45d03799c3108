// The dashboard: a header (pages, live-update state, access token) and the
// page the hash names. One LiveFeed (the SSE stream) serves every page.

import { render } from 'preact';
import { useEffect, useMemo, useState } from 'preact/hooks';
import { ApiError, ErrorText, GetToken, SetToken } from './api';
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
import { FetchWhoAmI, IdentityContext, IdentityText, type Identity } from './whoami';
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

// Who the token is, beside the token button: "vera · viewer", or "no tokens
// required". Nothing when the server cannot say (an older server without
// /whoami, or the server is down: the feed indicator says that).
function IdentityBadge({ identity }: { identity: Identity }) {
  const { who, error } = identity;
  if (who) {
    const text = IdentityText(who);
    const title = who.tokens_required
      ? `This token is ${who.name || '(unnamed)'}, role ${who.role}.`
      : 'The orchestrator runs without operator tokens: every caller may do everything.';
    return (
      <span class="whoami" data-testid="whoami" data-role={who.role} title={title}>
        {text}
      </span>
    );
  }
  if (error instanceof ApiError && error.code === 'UNAUTHENTICATED') {
    return (
      <span class="whoami whoami-none" data-testid="whoami" title={ErrorText(error)}>
        no valid token
      </span>
    );
  }
  return null;
}

// Asks /whoami again when the token changes (`epoch`); retries while the
// server is unreachable.
function useIdentity(epoch: number): Identity {
  const [identity, setIdentity] = useState<Identity>({ who: null, error: null });
  useEffect(() => {
    const abort = new AbortController();
    let timer: number | undefined;
    setIdentity({ who: null, error: null });
    const ask = () => {
      FetchWhoAmI(abort.signal).then(
        (who) => setIdentity({ who, error: null }),
        (error) => {
          if (abort.signal.aborted) return;
          setIdentity({ who: null, error });
          if (error instanceof ApiError && error.code === 'NETWORK') timer = window.setTimeout(ask, 5000);
        },
      );
    };
    ask();
    return () => {
      abort.abort();
      window.clearTimeout(timer);
    };
  }, [epoch]);
  return identity;
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
  const identity = useIdentity(epoch);
  useEffect(() => {
    feed.Start();
    return () => feed.Stop();
  }, [feed]);
  const current = route.page === 'task' ? 'tasks' : route.page;
  return (
    <FeedContext.Provider value={feed}>
      <IdentityContext.Provider value={identity}>
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
          <IdentityBadge identity={identity} />
          <TokenField
            onChange={() => {
              feed.Restart();
              setEpoch((n) => n + 1);
            }}
          />
        </header>
        <Page route={route} epoch={epoch} />
      </IdentityContext.Provider>
    </FeedContext.Provider>
  );
}

render(<App />, document.getElementById('app')!);
