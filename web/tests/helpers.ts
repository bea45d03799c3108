// Shared by the specs: where the system is, and out-of-band API calls (what
// apollo-cli would do while an operator watches the dashboard).
import { expect, type Page } from '@playwright/test';
import { kStates } from '../src/states';

export function UiUrl(hash = ''): string {
  const base = process.env.APOLLO_UI_URL;
  if (!base) throw new Error('APOLLO_UI_URL is not set: run through playwright test (tests/global-setup.ts)');
  return `${base}/${hash}`;
}

export async function SubmitOutOfBand(yaml: string): Promise<unknown> {
  const r = await fetch(`${process.env.APOLLO_HTTP_URL}/api/v1/tasks`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/yaml' },
    body: yaml,
  });
  const body = await r.json();
  expect(r.status, JSON.stringify(body)).toBe(201);
  return body;
}

// Marks the page so a later check can tell it was never reloaded.
export async function MarkPage(page: Page): Promise<void> {
  await page.evaluate(() => ((window as unknown as { __noReload: boolean }).__noReload = true));
}

export async function ExpectNotReloaded(page: Page): Promise<void> {
  expect(await page.evaluate(() => (window as unknown as { __noReload?: boolean }).__noReload)).toBe(true);
}

// The fill colour a DAG box of this state must have (as the browser reports it).
export function Rgb(state: string): string {
  const hex = kStates[state].color;
  const n = (i: number) => parseInt(hex.slice(i, i + 2), 16);
  return `rgb(${n(1)}, ${n(3)}, ${n(5)})`;
}

export function Dag3(prefix: string, middleSeconds: number): string {
  return `# ${prefix}: a, then b (sleeps), then c
tasks:
  - task_id: ${prefix}-a
    intent: noop
    target_selector: {type: label, key: role, value: worker}
    timeout: 30
    metadata: {suite: ui}
  - task_id: ${prefix}-b
    intent: sleep
    params: {seconds: ${middleSeconds}}
    target_selector: {type: nodes, nodes: [worker-1]}
    timeout: 30
    depends_on: [${prefix}-a]
    metadata: {suite: ui}
  - task_id: ${prefix}-c
    intent: noop
    target_selector: {type: label, key: zone, value: a}
    timeout: 30
    depends_on: [${prefix}-b]
    metadata: {suite: ui}
`;
}

// The header's live-update state must match what the server offers: "live"
// (the event stream; no polling) when it serves /api/v1/stream, else
// "polling" with the reason in its tooltip.
export async function ExpectFeedMode(page: Page): Promise<void> {
  const feed = page.getByTestId('feed-mode');
  if (process.env.APOLLO_HAS_STREAM) {
    await expect(feed).toHaveAttribute('data-mode', 'live');
  } else {
    await expect(feed).toHaveAttribute('data-mode', 'polling');
    await expect(feed).toHaveAttribute('title', /unavailable \(HTTP 404/);
  }
}
