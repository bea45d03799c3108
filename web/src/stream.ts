// Live updates: Server-Sent Events from GET /api/v1/stream, read with
// fetch() and a stream parser (EventSource cannot send the Authorization
// header). Reconnects with backoff; while the stream is unavailable the
// pages poll instead (every kPollMs), so they stay live either way.
//
// Events: `task` (data: one Task JSON, as GET /api/v1/tasks/{id} answers),
// `resync` (data: {}; changes were dropped, refetch), `error` (data: the
// API's {"error": {...}}; the stream ends after it), `: keepalive`
// comments. A (re)connect is a resync too: changes made while we were away
// were not seen.

import { AuthHeaders } from './api';
import type { Task } from './types';

export const kPollMs = 2000;
// No byte (not even a keepalive) for this long: the connection is dead.
const kStallMs = 45_000;
const kMinBackoffMs = 500;
const kMaxBackoffMs = 15_000;

export type FeedMode = 'connecting' | 'live' | 'polling';

export interface FeedListener {
  onTask?(task: Task): void;
  // Refetch everything shown: a (re)connect, a resync event, or a poll tick.
  onRefresh?(): void;
}

export interface SseEvent {
  event: string;
  data: string;
  id: string;
}

// Incremental SSE parser (the WHATWG "event stream" rules): feed it text
// chunks as they arrive; it calls `emit` for each complete event and
// `comment` for each comment line.
export class SseParser {
  private buffer = '';
  private event = '';
  private data: string[] = [];
  private id = '';

  constructor(
    private readonly emit: (e: SseEvent) => void,
    private readonly comment: (text: string) => void = () => {},
  ) {}

  Push(chunk: string): void {
    this.buffer += chunk;
    let nl: number;
    while ((nl = this.buffer.search(/\r\n|\r|\n/)) >= 0) {
      const line = this.buffer.slice(0, nl);
      const width = this.buffer.startsWith('\r\n', nl) ? 2 : 1;
      // A lone \r at the end of a chunk may be half of \r\n: wait for more.
      if (this.buffer[nl] === '\r' && nl + 1 === this.buffer.length) break;
      this.buffer = this.buffer.slice(nl + width);
      this.Line(line);
    }
  }

  private Line(line: string): void {
    if (line === '') {
      if (this.data.length > 0) {
        this.emit({ event: this.event || 'message', data: this.data.join('\n'), id: this.id });
      }
      this.event = '';
      this.data = [];
      return;
    }
    if (line.startsWith(':')) {
      this.comment(line.slice(1).trim());
      return;
    }
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.event = value;
    else if (field === 'data') this.data.push(value);
    else if (field === 'id') this.id = value;
  }
}

// One connection for the whole page, shared by every view (browsers allow
// only ~6 HTTP/1.1 connections per host).
export class LiveFeed {
  private listeners = new Set<FeedListener>();
  private modeListeners = new Set<(m: FeedMode, detail: string) => void>();
  private mode: FeedMode = 'connecting';
  private detail = '';
  private abort: AbortController | null = null;
  private pollTimer: number | undefined;
  private retryTimer: number | undefined;
  private backoff = kMinBackoffMs;
  private stopped = false;

  constructor(private readonly url = 'api/v1/stream') {}

  Start(): void {
    this.stopped = false;
    void this.Connect();
  }

  Stop(): void {
    this.stopped = true;
    this.abort?.abort();
    window.clearTimeout(this.retryTimer);
    window.clearInterval(this.pollTimer);
  }

  // Reconnect now (e.g. after the token changed).
  Restart(): void {
    this.abort?.abort();
    window.clearTimeout(this.retryTimer);
    this.backoff = kMinBackoffMs;
    void this.Connect();
  }

  Subscribe(l: FeedListener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }

  OnMode(f: (m: FeedMode, detail: string) => void): () => void {
    this.modeListeners.add(f);
    f(this.mode, this.detail);
    return () => this.modeListeners.delete(f);
  }

  get Mode(): FeedMode {
    return this.mode;
  }

  private SetMode(m: FeedMode, detail = ''): void {
    if (m === 'polling' && this.pollTimer === undefined) {
      this.pollTimer = window.setInterval(() => this.Refresh(), kPollMs);
    }
    if (m !== 'polling' && this.pollTimer !== undefined) {
      window.clearInterval(this.pollTimer);
      this.pollTimer = undefined;
    }
    this.mode = m;
    this.detail = detail;
    for (const f of this.modeListeners) f(m, detail);
  }

  private Refresh(): void {
    for (const l of this.listeners) l.onRefresh?.();
  }

  private async Connect(): Promise<void> {
    if (this.stopped) return;
    const abort = new AbortController();
    this.abort = abort;
    let stall: number | undefined;
    const alive = () => {
      window.clearTimeout(stall);
      stall = window.setTimeout(() => abort.abort(), kStallMs);
    };
    try {
      const resp = await fetch(this.url, {
        headers: { Accept: 'text/event-stream', ...AuthHeaders() },
        signal: abort.signal,
        cache: 'no-store',
      });
      const type = resp.headers.get('Content-Type') ?? '';
      if (!resp.ok || !resp.body || !type.startsWith('text/event-stream')) {
        throw new Error(resp.ok ? `not an event stream (${type || 'no type'})` : `HTTP ${resp.status}${await ErrorSuffix(resp)}`);
      }
      alive();
      this.backoff = kMinBackoffMs;
      this.SetMode('live');
      this.Refresh();
      let failure = '';
      const parser = new SseParser((e) => {
        if (e.event === 'error') failure = `: ${ErrorMessage(e.data)}`;
        else this.Dispatch(e);
      }, alive);
      const reader = resp.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        alive();
        parser.Push(value);
      }
      throw new Error(`the stream ended${failure}`);
    } catch (e) {
      if (this.stopped || (abort !== this.abort)) return;
      this.SetMode('polling', String(e instanceof Error ? e.message : e));
      this.Refresh();
      const wait = this.backoff * (0.75 + Math.random() * 0.5);
      this.backoff = Math.min(this.backoff * 2, kMaxBackoffMs);
      this.retryTimer = window.setTimeout(() => void this.Connect(), wait);
    } finally {
      window.clearTimeout(stall);
    }
  }

  private Dispatch(e: SseEvent): void {
    if (e.event === 'resync') {
      this.Refresh();
      return;
    }
    if (e.event !== 'task') return;
    let task: Task;
    try {
      task = JSON.parse(e.data) as Task;
    } catch {
      this.Refresh();
      return;
    }
    for (const l of this.listeners) l.onTask?.(task);
  }
}

// "CODE: message" of the API's {"error": {...}} JSON, else the text.
function ErrorMessage(text: string): string {
  try {
    const e = (JSON.parse(text) as { error?: { code?: string; message?: string } }).error;
    if (e?.message) return `${e.code ?? ''}: ${e.message}`;
  } catch {
    // Not JSON: shown as it is.
  }
  return text.slice(0, 200);
}

async function ErrorSuffix(resp: Response): Promise<string> {
  try {
    const text = await resp.text();
    return text ? ` ${ErrorMessage(text)}` : '';
  } catch {
    return '';
  }
}
