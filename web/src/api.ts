// The dashboard's one way to the orchestrator: fetch() with the operator
// token, JSON in and out, and every failure turned into an ApiError whose
// message a person can read at 3 a.m.

import type { Problem } from './types';

const kTokenKey = 'apollo.token';

export function GetToken(): string {
  try {
    return localStorage.getItem(kTokenKey) ?? '';
  } catch {
    return '';
  }
}

export function SetToken(token: string): void {
  if (token) localStorage.setItem(kTokenKey, token);
  else localStorage.removeItem(kTokenKey);
}

export function AuthHeaders(): Record<string, string> {
  const token = GetToken();
  return token ? { Authorization: `Bearer ${token}` } : {};
}

// An API error: `code` is the gRPC code name the server sent
// ({"error":{"code","message"}}), or NETWORK / HTTP_<status> when the answer
// was not the API's JSON.
export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly httpStatus: number,
    readonly problems: Problem[] = [],
  ) {
    super(message);
  }

  // What to do about it, when the code says.
  get hint(): string {
    switch (this.code) {
      case 'UNAUTHENTICATED':
        return 'Set an access token (the key button, top right).';
      case 'PERMISSION_DENIED':
        return "Your token's role does not allow this; ask for an operator or admin token.";
      case 'NETWORK':
        return 'Is the orchestrator running? The page keeps retrying.';
      case 'RESOURCE_EXHAUSTED':
        return 'The dispatch queue is full or paused; try again shortly.';
      default:
        return '';
    }
  }
}

export interface RequestOptions {
  method?: string;
  query?: Record<string, string | number | boolean | undefined>;
  body?: string;
  contentType?: string;
  signal?: AbortSignal;
}

export function WithQuery(path: string, query: RequestOptions['query']): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) {
    if (v !== undefined && v !== '') q.set(k, String(v));
  }
  const s = q.toString();
  return s ? `${path}?${s}` : path;
}

export async function Api<T>(path: string, opts: RequestOptions = {}): Promise<T> {
  const method = opts.method ?? 'GET';
  const headers: Record<string, string> = { Accept: 'application/json', ...AuthHeaders() };
  if (opts.body !== undefined) headers['Content-Type'] = opts.contentType ?? 'application/json';
  let resp: Response;
  try {
    resp = await fetch(WithQuery(path, opts.query), {
      method,
      headers,
      body: opts.body,
      signal: opts.signal,
    });
  } catch (e) {
    if (e instanceof DOMException && e.name === 'AbortError') throw e;
    throw new ApiError('NETWORK', `cannot reach the orchestrator (${method} ${path}): ${String(e)}`, 0);
  }
  const text = await resp.text();
  let json: unknown = undefined;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    // Not JSON: reported below with the text itself.
  }
  if (!resp.ok) throw ErrorOf(resp.status, method, path, json, text);
  if (json === undefined) {
    throw new ApiError(`HTTP_${resp.status}`, `${method} ${path}: the answer is not JSON: ${text.slice(0, 200)}`, resp.status);
  }
  return json as T;
}

function ErrorOf(status: number, method: string, path: string, json: unknown, text: string): ApiError {
  const err = (json as { error?: { code?: string; message?: string; problems?: Problem[] } })?.error;
  if (err && typeof err.message === 'string') {
    return new ApiError(err.code ?? `HTTP_${status}`, err.message, status, err.problems ?? []);
  }
  const snippet = text.trim().slice(0, 200) || '(empty body)';
  return new ApiError(`HTTP_${status}`, `${method} ${path} answered HTTP ${status}: ${snippet}`, status);
}

export function ErrorText(e: unknown): string {
  if (e instanceof ApiError) return `${e.code}: ${e.message}`;
  return String(e);
}
