// Regenerates docs/screenshots/*.png (make screenshots): the main pages of
// the dashboard on a real system with tasks in every kind of state.
import { expect, test, type Page } from '@playwright/test';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { kRepoDir } from './cluster';
import { SubmitOutOfBand, UiUrl } from './helpers';

const kOut = process.env.APOLLO_SCREENSHOT_DIR ?? path.join(kRepoDir, 'docs', 'screenshots');

test.describe.configure({ mode: 'serial' });
test.use({ viewport: { width: 1360, height: 860 } });

async function Shot(page: Page, name: string, fullPage = false): Promise<void> {
  mkdirSync(kOut, { recursive: true });
  // The server keeps a few event streams (threads / 2) and notices a closed
  // page's only at its next keepalive: a refused stream is retried with
  // backoff. Shown as it normally is: live.
  if (process.env.APOLLO_HAS_STREAM) {
    await expect(page.getByTestId('feed-mode')).toHaveAttribute('data-mode', 'live');
  }
  // Drop the focus ring.
  await page.evaluate(() => (document.activeElement as HTMLElement | null)?.blur());
  await page.screenshot({ path: path.join(kOut, `${name}.png`), fullPage });
}

// Every agent runs on this one machine: a file is written by one of them
// only (two writing one path at once would race).
const kWorkers = '{type: label, key: role, value: worker}';

test('fill the system', async () => {
  await SubmitOutOfBand(`tasks:
  - {task_id: fetch-release, intent: noop, target_selector: ${kWorkers}, timeout: 30, metadata: {release: "2.4"}}
  - {task_id: write-config, intent: ensure_file, target_selector: {type: nodes, nodes: [worker-1]}, timeout: 30, depends_on: [fetch-release],
     params: {path: /tmp/apollo-ui-shot.conf, content: "version = 2\\n", mode: "0644"}, metadata: {release: "2.4"}}
  - {task_id: migrate-db, intent: sleep, params: {seconds: 1}, target_selector: {type: label, key: role, value: db}, timeout: 30,
     depends_on: [fetch-release], metadata: {release: "2.4"}}
  - {task_id: restart-service, intent: sleep, params: {seconds: 600}, target_selector: ${kWorkers}, timeout: 900,
     depends_on: [write-config, migrate-db], metadata: {release: "2.4"}}
  - {task_id: smoke-test, intent: noop, target_selector: {type: nodes, nodes: [worker-1]}, timeout: 30,
     depends_on: [restart-service], metadata: {release: "2.4"}}
  - {task_id: notify, intent: noop, target_selector: {type: nodes, nodes: [worker-2]}, timeout: 30, depends_on: [smoke-test]}
`);
  // Five failures of exec in a row open its circuit breaker (an alert);
  // the exec task after them is held. (Batches until it is OPEN: see the
  // breaker test in dashboard.spec.ts.)
  const api = process.env.APOLLO_HTTP_URL;
  const breaker = async () =>
    ((await (await fetch(`${api}/api/v1/intents`)).json()) as { intents: { intent: string; breaker: string }[] }).intents.find(
      (i) => i.intent === 'exec',
    )?.breaker;
  for (let batch = 0; batch < 3 && (await breaker()) !== 'OPEN'; batch++) {
    const disk = [1, 2, 3, 4, 5].map((i) => `  - {task_id: disk-check-${batch * 5 + i}, intent: exec, params: {argv: [sh, -c, "echo disk full >&2; exit 3"]},
     target_selector: {type: nodes, nodes: [worker-${(i % 2) + 1}]}, timeout: 30, retry_policy: {max_retries: 0}}`);
    await SubmitOutOfBand(`tasks:\n${disk.join('\n')}\n`);
    await expect.poll(breaker, { timeout: 10_000 }).toBe('OPEN').catch(() => undefined);
  }
  expect(await breaker()).toBe('OPEN');
  await SubmitOutOfBand(`tasks:
  - {task_id: rotate-logs, intent: exec, params: {argv: [logrotate, /etc/logrotate.conf]}, target_selector: {type: nodes, nodes: [worker-1]}, timeout: 30}
  - {task_id: edge-cache-warm, intent: noop, target_selector: {type: nodes, nodes: [edge-17]}, timeout: 30}
  - {task_id: collect-metrics, intent: collect_metrics, target_selector: {type: label, key: zone, value: a}, timeout: 30}
`);
});

test('task list', async ({ page }) => {
  await page.goto(UiUrl('#/'));
  await expect(page.locator('tr[data-task-id="restart-service"] .badge')).toHaveText('RUNNING');
  await expect(page.locator('tr[data-task-id="disk-check-5"] .badge')).toHaveText('FAILED');
  await expect(page.locator('tr[data-task-id="collect-metrics"] .badge')).toHaveText('SUCCEEDED');
  await page.locator('.legend summary').click();
  await Shot(page, 'tasks');
});

test('task detail: DAG, per-node rows, timeline', async ({ page }) => {
  await page.goto(UiUrl('#/tasks/restart-service'));
  const dag = page.getByTestId('dag');
  await expect(dag.locator('[data-task-id="migrate-db"]')).toHaveAttribute('data-state', 'SUCCEEDED');
  await expect(dag.locator('[data-task-id="notify"]')).toHaveCount(1);
  await expect(page.getByTestId('timeline').locator('li[data-to="RUNNING"]')).toHaveCount(2);
  await Shot(page, 'task', true);
});

test('a stuck task and its blocked_reason', async ({ page }) => {
  await page.goto(UiUrl('#/tasks/edge-cache-warm'));
  await expect(page.getByTestId('blocked')).toContainText('node_not_registered');
  await expect(page.getByTestId('dag').locator('[data-task-id="edge-cache-warm"]')).toHaveCount(1);
  await Shot(page, 'task-blocked');
});

test('a failed task', async ({ page }) => {
  await page.goto(UiUrl('#/tasks/disk-check-1'));
  await expect(page.getByTestId('node-rows').locator('.badge').first()).toHaveText('FAILED');
  await expect(page.getByTestId('dag').locator('[data-task-id="disk-check-1"]')).toHaveCount(1);
  await Shot(page, 'task-failed');
});

test('a task held by an open breaker', async ({ page }) => {
  await page.goto(UiUrl('#/tasks/rotate-logs'));
  await expect(page.getByTestId('blocked')).toContainText('circuit_open exec');
  await expect(page.getByTestId('dag').locator('[data-task-id="rotate-logs"]')).toHaveCount(1);
  await Shot(page, 'task-breaker');
});

test('submit with problems against their lines', async ({ page }) => {
  await page.goto(UiUrl('#/submit'));
  await page.getByTestId('task-file').fill(`tasks:
  - task_id: rotate logs
    intent: exec
    target_selector: {type: label, key: role, value: worker}
    timeout: 30s
    params: {argv: [logrotate, /etc/logrotate.conf]}
`);
  await page.getByRole('button', { name: 'Submit', exact: true }).click();
  await expect(page.getByTestId('problem').first()).toBeVisible();
  await Shot(page, 'submit-errors');
});

test('nodes', async ({ page }) => {
  await page.goto(UiUrl('#/nodes'));
  await expect(page.getByTestId('nodes').locator('tr[data-node-id="db-1"] .badge')).toHaveText('ALIVE');
  await Shot(page, 'nodes');
});

test('dead letters', async ({ page }) => {
  await page.goto(UiUrl('#/dead-letters'));
  await expect(page.getByTestId('dead-letters').locator('tbody tr')).toHaveCount(2);
  await Shot(page, 'dead-letters');
});

test('bus and intents', async ({ page }) => {
  await page.goto(UiUrl('#/bus'));
  await expect(page.getByTestId('intents').locator('tr[data-intent="exec"] .badge')).toHaveText('OPEN');
  await Shot(page, 'bus');
});

test('alerts', async ({ page }) => {
  await page.goto(UiUrl('#/alerts'));
  await expect(page.getByTestId('alerts').locator('tbody tr', { hasText: 'circuit_open' })).toHaveCount(1);
  await Shot(page, 'alerts');
});
