// Times from the API are microseconds since the epoch, as strings (int64).
// Shown in the browser's local time with a relative age beside.

export function UsToMs(us: string | number | undefined): number {
  const n = Number(us ?? 0);
  return Number.isFinite(n) ? n / 1000 : 0;
}

function Pad(n: number, w = 2): string {
  return String(n).padStart(w, '0');
}

// "2026-12-01 21:14:05" in local time; "—" for 0.
export function LocalTime(us: string | number | undefined, withMs = false): string {
  const ms = UsToMs(us);
  if (!ms) return '—';
  const d = new Date(ms);
  const base = `${d.getFullYear()}-${Pad(d.getMonth() + 1)}-${Pad(d.getDate())} ${Pad(d.getHours())}:${Pad(d.getMinutes())}:${Pad(d.getSeconds())}`;
  return withMs ? `${base}.${Pad(d.getMilliseconds(), 3)}` : base;
}

export function IsoUtc(us: string | number | undefined): string {
  const ms = UsToMs(us);
  return ms ? new Date(ms).toISOString() : '';
}

// "5 s ago", "3 min ago", "2 h ago", "4 d ago" ("in 3 s" for the future).
export function Age(ms: number, now: number): string {
  if (!ms) return '';
  const d = now - ms;
  const a = Math.abs(d) / 1000;
  let s: string;
  if (a < 1) return 'just now';
  if (a < 60) s = `${Math.floor(a)} s`;
  else if (a < 3600) s = `${Math.floor(a / 60)} min`;
  else if (a < 86400) s = `${Math.floor(a / 3600)} h`;
  else s = `${Math.floor(a / 86400)} d`;
  return d >= 0 ? `${s} ago` : `in ${s}`;
}

// A duration in milliseconds: "850 ms", "12.3 s", "4 min 5 s".
export function Duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const m = Math.floor(ms / 60_000);
  return `${m} min ${Math.round((ms % 60_000) / 1000)} s`;
}
