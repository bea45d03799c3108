// Small shared pieces: state badges, the legend, times, errors, empty states.

import { Fragment, type ComponentChildren } from 'preact';
import { ApiError } from '../api';
import { kStateOrder, kStates, LookOf } from '../states';
import { Age, IsoUtc, LocalTime, UsToMs } from '../time';
import { useNow } from '../hooks';
import type { Permission } from '../whoami';

export function StateBadge({ state, label }: { state: string; label?: string }) {
  const look = LookOf(state);
  return (
    <span class="badge" data-state={state} style={{ background: look.color, color: look.text }} title={look.meaning}>
      {label ?? (state || '—')}
    </span>
  );
}

export function Legend() {
  return (
    <details class="legend">
      <summary>State colours</summary>
      <ul>
        {kStateOrder.map((s) => (
          <li key={s}>
            <StateBadge state={s} /> {kStates[s].meaning}
          </li>
        ))}
      </ul>
    </details>
  );
}

// Local time with the relative age beside it; UTC in the tooltip.
export function When({ us, ms }: { us: string | number; ms?: boolean }) {
  const now = useNow();
  if (!UsToMs(us)) return <span class="muted">—</span>;
  return (
    <span class="when" title={IsoUtc(us)}>
      <time dateTime={IsoUtc(us)}>{LocalTime(us, ms)}</time>{' '}
      <span class="age">({Age(UsToMs(us), now)})</span>
    </span>
  );
}

export function ErrorBox({ error, title }: { error: unknown; title?: string }) {
  if (!error) return null;
  const e = error instanceof ApiError ? error : null;
  return (
    <div class="error" role="alert">
      {title && <strong>{title}: </strong>}
      {e ? (
        <>
          <code class="code">{e.code}</code> {e.message}
          {e.hint && <div class="hint">{e.hint}</div>}
        </>
      ) : (
        String(error)
      )}
    </div>
  );
}

export function Empty({ children }: { children: ComponentChildren }) {
  return <div class="empty">{children}</div>;
}

export function Loading() {
  return <div class="muted loading">Loading…</div>;
}

export function Kv({ items }: { items: [string, ComponentChildren][] }) {
  return (
    <dl class="kv">
      {items.map(([k, v]) => (
        <Fragment key={k}>
          <dt>{k}</dt>
          <dd>{v}</dd>
        </Fragment>
      ))}
    </dl>
  );
}

export function Chips({ map }: { map: Record<string, string> }) {
  const entries = Object.entries(map ?? {}).sort(([a], [b]) => a.localeCompare(b));
  if (entries.length === 0) return <span class="muted">none</span>;
  return (
    <span class="chips">
      {entries.map(([k, v]) => (
        <span class="chip" key={k}>
          {k}={v}
        </span>
      ))}
    </span>
  );
}

// Why the buttons beside it are disabled: "needs admin" (the role the
// token lacks); the full reason in the tooltip. Nothing when allowed.
export function NeedsRole({ perm, id }: { perm: Permission; id?: string }) {
  if (perm.allowed) return null;
  return (
    <span class="needs-role" id={id} data-testid="needs-role" title={perm.reason}>
      {perm.short}
    </span>
  );
}
