// Operator tokens from the browser, on a second orchestrator started with
// --acl: without a token every view says so (UNAUTHENTICATED, with what to
// do); a viewer token reads (and streams) but its submit is refused
// (PERMISSION_DENIED, naming the role); an admin token submits; the token
// survives a reload (localStorage).
import { expect, test } from '@playwright/test';
import { StartCluster, type Cluster } from './cluster';

test.describe.configure({ mode: 'serial' });

let cluster: Cluster;
let admin = '';
let viewer = '';

test.beforeAll(async () => {
  cluster = await StartCluster({ acl: true, agents: [], seedDeadLetters: false });
  admin = JSON.parse(cluster.Cli(['-o', 'json', 'acl', 'bootstrap'])).token;
  viewer = JSON.parse(cluster.Cli(['-o', 'json', 'token', 'create', '--name', 'vera', '--role', 'viewer'], admin)).token;
  expect(admin).toMatch(/^apollo-/);
  expect(viewer).toMatch(/^apollo-/);
});

test.afterAll(async () => {
  await cluster?.Stop(false);
});

async function SetToken(page: import('@playwright/test').Page, token: string): Promise<void> {
  await page.getByRole('button', { name: /token/ }).click();
  await page.getByPlaceholder('apollo-…').fill(token);
  await page.getByRole('button', { name: 'Save' }).click();
}

test('no token, a viewer token, an admin token', async ({ page }) => {
  await page.goto(`${cluster.uiUrl}/#/`);
  const alert = page.getByRole('alert');
  await expect(alert).toContainText('UNAUTHENTICATED');
  await expect(alert).toContainText('Set an access token');
  await expect(page.getByTestId('feed-mode')).toHaveAttribute('data-mode', 'polling');

  await SetToken(page, viewer);
  await expect(page.getByText('No tasks yet.')).toBeVisible();
  await expect(page.getByRole('alert')).toHaveCount(0);
  // The stream takes the token too (when the server has one).
  const feed = page.getByTestId('feed-mode');
  if (await fetch(`${cluster.httpUrl}/api/v1/stream`).then((r) => r.status !== 404)) {
    await expect(feed).toHaveAttribute('data-mode', 'live');
  }

  await page.getByRole('navigation').getByRole('link', { name: 'Submit' }).click();
  await page.getByTestId('task-file').fill('task_id: acl-1\nintent: noop\ntarget_selector: {type: nodes, nodes: [n1]}\ntimeout: 30\n');
  await page.getByRole('button', { name: 'Submit', exact: true }).click();
  await expect(page.getByRole('alert')).toContainText('PERMISSION_DENIED');
  await expect(page.getByRole('alert')).toContainText('vera');
  await expect(page.getByRole('alert')).toContainText("Your token's role does not allow this");

  await SetToken(page, admin);
  await page.getByRole('button', { name: 'Submit', exact: true }).click();
  await expect(page.getByTestId('submit-result')).toContainText('Submitted 1 task(s)');

  await page.reload();
  await expect(page.getByRole('button', { name: /token set/ })).toBeVisible();
  await page.goto(`${cluster.uiUrl}/#/`);
  await expect(page.locator('tr[data-task-id="acl-1"]')).toHaveCount(1);
});
