// A real Apollo-11 system on loopback for the browser tests: an
// orchestrator (SQLite store in a temp dir, kernel-chosen ports, found in
// its log like tests/e2e/lib.sh does) and three edge agents with labels.
// Only the processes started here are stopped, by PID. Every wait is
// bounded.
//
// The dashboard is served by the orchestrator itself (--http-ui-dir
// web/dist) when the binary has the flag; otherwise (older binaries, or
// APOLLO_UI_SERVE=proxy) by a small static server here that forwards /api,
// /metrics, /healthz and /readyz to the orchestrator.

import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, openSync, readFileSync, writeFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const kWebDir = fileURLToPath(new URL('..', import.meta.url));
export const kRepoDir = path.resolve(kWebDir, '..');
export const kDistDir = path.join(kWebDir, 'dist');

export interface AgentSpec {
  node: string;
  labels: string[];
}

export const kAgents: AgentSpec[] = [
  { node: 'worker-1', labels: ['role=worker', 'zone=a'] },
  { node: 'worker-2', labels: ['role=worker', 'zone=b'] },
  { node: 'db-1', labels: ['role=db', 'zone=a'] },
];

export interface Cluster {
  dir: string;
  grpcPort: number;
  httpUrl: string; // the orchestrator's HTTP server
  uiUrl: string; // where the dashboard is served
  uiServedBy: 'orchestrator' | 'proxy';
  hasStream: boolean; // GET /api/v1/stream answers text/event-stream
  // apollo-cli against this orchestrator; its stdout.
  Cli(args: string[], token?: string): string;
  Stop(keep: boolean): Promise<void>;
}

function Sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

async function WaitFor<T>(what: string, seconds: number, f: () => Promise<T | undefined> | T | undefined, log?: string): Promise<T> {
  const deadline = Date.now() + seconds * 1000;
  for (;;) {
    const v = await f();
    if (v !== undefined) return v;
    if (Date.now() > deadline) {
      const tail = log && existsSync(log) ? `\n--- ${log}\n${readFileSync(log, 'utf8').split('\n').slice(-30).join('\n')}` : '';
      throw new Error(`timed out after ${seconds} s waiting for ${what}${tail}`);
    }
    await Sleep(100);
  }
}

function BinDir(): string {
  const bin = process.env.APOLLO_BIN ?? path.join(kRepoDir, 'bin');
  for (const b of ['orchestrator', 'edge-agent', 'apollo-cli']) {
    if (!existsSync(path.join(bin, b))) {
      throw new Error(`${path.join(bin, b)} is missing: build first (make build), or set APOLLO_BIN to a dir with the binaries`);
    }
  }
  return bin;
}

function HasUiDirFlag(bin: string): boolean {
  try {
    return execFileSync(path.join(bin, 'orchestrator'), ['--help'], { encoding: 'utf8' }).includes('--http-ui-dir');
  } catch {
    return false;
  }
}

// A static file server for dist that forwards the API to the orchestrator,
// streaming the answer (so Server-Sent Events pass through).
function StartProxy(target: URL): Promise<http.Server> {
  const types: Record<string, string> = {
    '.html': 'text/html; charset=utf-8',
    '.js': 'text/javascript',
    '.css': 'text/css',
    '.svg': 'image/svg+xml',
    '.png': 'image/png',
  };
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (/^\/(api|metrics|healthz|readyz)(\/|$)/.test(url.pathname)) {
      const up = http.request(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
        (ur) => {
          res.writeHead(ur.statusCode ?? 502, ur.headers);
          ur.pipe(res);
        },
      );
      up.on('error', (e) => {
        res.writeHead(502, { 'Content-Type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 'UNAVAILABLE', message: `proxy: ${e.message}` } }));
      });
      req.pipe(up);
      return;
    }
    const rel = url.pathname === '/' ? 'index.html' : decodeURIComponent(url.pathname).replace(/^\/+/, '');
    const file = path.join(kDistDir, rel);
    if (!file.startsWith(kDistDir) || !existsSync(file)) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'Content-Type': types[path.extname(file)] ?? 'application/octet-stream' });
    res.end(readFileSync(file));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

// Whether the orchestrator serves Server-Sent Events (read the headers, then
// hang up).
async function HasStream(httpUrl: string): Promise<boolean> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), 5000);
  try {
    const r = await fetch(`${httpUrl}/api/v1/stream`, { signal: abort.signal, headers: { Accept: 'text/event-stream' } });
    return r.ok && (r.headers.get('content-type') ?? '').startsWith('text/event-stream');
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}

async function Json(url: string): Promise<unknown> {
  try {
    const r = await fetch(url);
    return r.ok ? await r.json() : undefined;
  } catch {
    return undefined;
  }
}

export interface ClusterOptions {
  agents?: AgentSpec[]; // default kAgents
  acl?: boolean; // --acl: operator tokens required (Cluster.Cli makes them)
  seedDeadLetters?: boolean; // default true
}

export async function StartCluster(opts: ClusterOptions = {}): Promise<Cluster> {
  const agents = opts.agents ?? kAgents;
  const bin = BinDir();
  if (!existsSync(path.join(kDistDir, 'index.html'))) {
    throw new Error(`${kDistDir}/index.html is missing: build the dashboard first (cd web && npm run build, or make ui)`);
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'apollo-ui-test.'));
  const children: ChildProcess[] = [];
  let proxy: http.Server | null = null;
  const stop = async (keep: boolean) => {
    for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
    const deadline = Date.now() + 5000;
    while (children.some((c) => c.exitCode === null && c.signalCode === null) && Date.now() < deadline) await Sleep(50);
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    proxy?.close();
    if (keep) console.log(`apollo-ui-test: state kept in ${dir}`);
    else rmSync(dir, { recursive: true, force: true });
  };
  const run = (name: string, file: string, args: string[]): ChildProcess => {
    const out = openSync(path.join(dir, `${name}.log`), 'a');
    const child = spawn(file, args, { stdio: ['ignore', out, out] });
    children.push(child);
    return child;
  };
  try {
    const db = path.join(dir, 'apollo.db');
    // Two dead letters parked in the store before the orchestrator starts
    // (as tests/e2e/dlq_test.sh does): an event of the unknown task
    // late-task on ghost-node, and a malformed one.
    if (opts.seedDeadLetters ?? true) {
      const tool = path.join(bin, 'apollo-e2e-tool');
      if (!existsSync(tool)) throw new Error(`${tool} is missing (make build builds it): the dead-letter test needs it`);
      execFileSync(tool, ['seed-dlq', `sqlite://${db}`], { stdio: ['ignore', 'pipe', 'inherit'] });
    }

    const serve = process.env.APOLLO_UI_SERVE ?? 'auto';
    const uiFlag = HasUiDirFlag(bin);
    if (serve === 'orchestrator' && !uiFlag) throw new Error(`${bin}/orchestrator has no --http-ui-dir (APOLLO_UI_SERVE=orchestrator)`);
    const byOrchestrator = uiFlag && serve !== 'proxy';
    const log = path.join(dir, 'orchestrator.log');
    const orch = run('orchestrator', path.join(bin, 'orchestrator'), [
      '--listen', '127.0.0.1:0',
      '--store', `sqlite://${db}`,
      '--http-listen', '127.0.0.1:0',
      ...(opts.acl ? ['--acl'] : []),
      ...(byOrchestrator ? ['--http-ui-dir', kDistDir] : []),
    ]);
    const [grpcPort, httpPort] = await WaitFor('the orchestrator to listen', 20, () => {
      if (orch.exitCode !== null) throw new Error(`the orchestrator exited at start:\n${readFileSync(log, 'utf8')}`);
      const text = existsSync(log) ? readFileSync(log, 'utf8') : '';
      const g = text.match(/listening on 127\.0\.0\.1:(\d+)/);
      const h = text.match(/HTTP on http:\/\/127\.0\.0\.1:(\d+)/);
      return g && h ? [Number(g[1]), Number(h[1])] : undefined;
    }, log);
    const httpUrl = `http://127.0.0.1:${httpPort}`;
    await WaitFor('/readyz', 20, async () => ((await Json(`${httpUrl}/readyz`)) ? true : undefined), log);

    const agentConfig = path.join(dir, 'agent.yaml');
    writeFileSync(
      agentConfig,
      'reconnect: {initial_backoff_ms: 200, max_backoff_ms: 2000}\n' +
        'enabled_intents: [collect_metrics, ensure_file, exec, noop, sleep]\n' +
        'ensure_file: {allowed_dirs: [/tmp]}\n',
    );
    for (const a of agents) {
      run(a.node, path.join(bin, 'edge-agent'), [
        '--node-id', a.node,
        '--orchestrator', `127.0.0.1:${grpcPort}`,
        '--state-dir', path.join(dir, a.node),
        '--config', agentConfig,
        ...a.labels.flatMap((l) => ['--label', l]),
      ]);
    }
    const cli = (args: string[], token?: string) =>
      execFileSync(path.join(bin, 'apollo-cli'), ['--server', `127.0.0.1:${grpcPort}`, ...args], {
        encoding: 'utf8',
        env: { ...process.env, APOLLO_TOKEN: token ?? '' },
        timeout: 20_000,
      });
    if (agents.length > 0) {
      await WaitFor('every agent connected', 30, async () => {
        const r = (await Json(`${httpUrl}/api/v1/nodes`)) as { nodes: { node_id: string; connected: boolean }[] } | undefined;
        const up = new Set((r?.nodes ?? []).filter((n) => n.connected).map((n) => n.node_id));
        return agents.every((a) => up.has(a.node)) ? true : undefined;
      }, log);
    }

    let uiUrl = httpUrl;
    if (!byOrchestrator) {
      proxy = await StartProxy(new URL(httpUrl));
      const addr = proxy.address() as { port: number };
      uiUrl = `http://127.0.0.1:${addr.port}`;
    } else {
      const html = await fetch(`${uiUrl}/`).then((r) => r.text());
      if (!html.includes('id="app"')) throw new Error(`the orchestrator does not serve the dashboard at /: ${html.slice(0, 200)}`);
    }
    // Under --acl the stream answers 401 without a token: probe with none
    // only when tokens are off (the ACL test checks the stream itself).
    const hasStream = opts.acl ? false : await HasStream(httpUrl);
    console.log(
      `apollo-ui-test: binaries ${bin}; orchestrator HTTP ${httpUrl}; dashboard ${uiUrl} ` +
        `(served by ${byOrchestrator ? 'the orchestrator' : 'the test proxy'}); ` +
        `live updates: ${opts.acl ? 'not probed (tokens on)' : hasStream ? 'the event stream' : 'polling (no /api/v1/stream)'}; state in ${dir}`,
    );
    return { dir, grpcPort, httpUrl, uiUrl, uiServedBy: byOrchestrator ? 'orchestrator' : 'proxy', hasStream, Cli: cli, Stop: stop };
  } catch (e) {
    await stop(true);
    throw e;
  }
}
