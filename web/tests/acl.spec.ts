// Operator tokens from the browser, on a second orchestrator started with
// --acl (and the two seeded dead letters): without a token every view says so
// (UNAUTHENTICATED, with what to do); the header names the token and its role
// (GET /api/v1/whoami); what the role cannot do is disabled with the reason: a
// viewer reads (and streams) but cannot submit, cancel, replay or drop; an
// operator submits and cancels but cannot replay or drop (needs admin); an
// admin does everything; the token survives a reload (localStorage). Against
// a server without /whoami nothing is disabled and the server's
// PERMISSION_DENIED is shown.
import { expect, test, type Locator, type Page } from '@playwright/test';
import { StartCluster, type Cluster } from './cluster';

test.describe.configure({ mode: 'serial' });

let cluster: Cluster;
let admin = '';
let operator = '';
let viewer = '';

test.beforeAll(async () => {
  cluster = await StartCluster({ acl: true, agents: [] });
  admin = JSON.parse(cluster.Cli(['-o', 'json', 'acl', 'bootstrap'])).token;
  operator = JSON.parse(cluster.Cli(['-o', 'json', 'token', 'create', '--name', 'otto', '--role', 'operator'], admin)).token;
  viewer = JSON.parse(cluster.Cli(['-o', 'json', 'token', 'create', '--name', 'vera', '--role', 'viewer'], admin)).token;
  expect(admin).toMatch(/^apollo-/);
  expect(operator).toMatch(/^apollo-/);
  expect(viewer).toMatch(/^apollo-/);
});

test.afterAll(async () => {
  await cluster?.Stop(false);
});

async function SetToken(page: Page, token: string): Promise<void> {
  await page.getByRole('button', { name: /token/ }).click();
  await page.getByPlaceholder('apollo-…').fill(token);
  await page.getByRole('button', { name: 'Save' }).click();
}

async function Nav(page: Page, name: string): Promise<void> {
  await page.getByRole('navigation').getByRole('link', { name, exact: true }).click();
}

// Disabled because of the role: the tooltip says which role is needed, and
// the short text beside says it too.
async function ExpectNeeds(button: Locator, role: string): Promise<void> {
  await expect(button).toBeDisabled();
  await expect(button).toHaveAttribute('title', new RegExp(`Needs the ${role} role`));
  await expect(button).toHaveAccessibleDescription(`needs ${role}`);
}

async function ExpectAllowed(button: Locator): Promise<void> {
  await expect(button).toBeEnabled();
  await expect(button).not.toHaveAttribute('title', /Needs the/);
}

const kTaskFile = 'task_id: acl-1\nintent: noop\ntarget_selector: {type: nodes, nodes: [n1]}\ntimeout: 300\n';

test('no token, a viewer token, an operator token, an admin token', async ({ page }) => {
  await page.goto(`${cluster.uiUrl}/#/`);
  const alert = page.getByRole('alert');
  await expect(alert).toContainText('UNAUTHENTICATED');
  await expect(alert).toContainText('Set an access token');
  await expect(page.getByTestId('feed-mode')).toHaveAttribute('data-mode', 'polling');
  const who = page.getByTestId('whoami');
  await expect(who).toHaveText('no valid token');

  // A viewer: reads, streams; everything else is disabled, with the reason.
  await SetToken(page, viewer);
  await expect(who).toHaveText('vera · viewer');
  await expect(page.getByText('No tasks yet.')).toBeVisible();
  await expect(page.getByRole('alert')).toHaveCount(0);
  // The stream takes the token too (when the server has one).
  const feed = page.getByTestId('feed-mode');
  if (await fetch(`${cluster.httpUrl}/api/v1/stream`).then((r) => r.status !== 404)) {
    await expect(feed).toHaveAttribute('data-mode', 'live');
  }

  await Nav(page, 'Submit');
  await page.getByTestId('task-file').fill(kTaskFile);
  const submit = page.getByRole('button', { name: 'Submit', exact: true });
  const dryRun = page.getByRole('button', { name: 'Dry run', exact: true });
  await ExpectNeeds(submit, 'operator');
  await ExpectNeeds(dryRun, 'operator');
  await expect(page.getByTestId('needs-role')).toContainText('needs operator');
  await expect(page.getByTestId('needs-role')).toHaveAttribute('title', 'Needs the operator role; vera is viewer.');

  await Nav(page, 'Dead letters');
  const letters = page.getByTestId('dead-letters').locator('tbody tr');
  await expect(letters).toHaveCount(2);
  await ExpectNeeds(page.getByRole('button', { name: 'Replay all' }), 'admin');
  for (const row of await letters.all()) {
    await ExpectNeeds(row.getByRole('button', { name: 'Replay', exact: true }), 'admin');
    await ExpectNeeds(row.getByRole('button', { name: 'Drop' }), 'admin');
  }
  await expect(page.getByTestId('needs-role')).toContainText('needs admin');

  // An operator: submits (and dry-runs), cancels; replay and drop still need admin.
  await SetToken(page, operator);
  await expect(who).toHaveText('otto · operator');
  await expect(letters).toHaveCount(2);
  await ExpectNeeds(page.getByRole('button', { name: 'Replay all' }), 'admin');
  for (const row of await letters.all()) {
    await ExpectNeeds(row.getByRole('button', { name: 'Replay', exact: true }), 'admin');
    await ExpectNeeds(row.getByRole('button', { name: 'Drop' }), 'admin');
  }
  await expect(page.getByTestId('needs-role')).toHaveAttribute('title', 'Needs the admin role; otto is operator.');

  await Nav(page, 'Submit');
  await page.getByTestId('task-file').fill(kTaskFile);
  await ExpectAllowed(dryRun);
  await ExpectAllowed(submit);
  await expect(page.getByTestId('needs-role')).toHaveCount(0);
  await dryRun.click();
  await expect(page.getByTestId('submit-result')).toContainText('Dry run: the file is valid.');
  await submit.click();
  await expect(page.getByTestId('submit-result')).toContainText('Submitted 1 task(s)');

  // The task page: an operator may cancel; a viewer may not.
  await page.getByTestId('submit-result').getByRole('link', { name: 'acl-1' }).click();
  const cancel = page.getByRole('button', { name: 'Cancel task' });
  await ExpectAllowed(cancel);
  await SetToken(page, viewer);
  await expect(who).toHaveText('vera · viewer');
  await ExpectNeeds(cancel, 'operator');
  await ExpectNeeds(page.getByRole('button', { name: 'Retry failed rows' }), 'operator');

  // An admin: everything enabled; a drop goes through.
  await SetToken(page, admin);
  await expect(who).toHaveText(/ · admin$/);
  await ExpectAllowed(cancel);
  await Nav(page, 'Dead letters');
  await expect(letters).toHaveCount(2);
  await ExpectAllowed(page.getByRole('button', { name: 'Replay all' }));
  for (const row of await letters.all()) {
    await ExpectAllowed(row.getByRole('button', { name: 'Replay', exact: true }));
    await ExpectAllowed(row.getByRole('button', { name: 'Drop' }));
  }
  await expect(page.getByTestId('needs-role')).toHaveCount(0);
  const malformed = letters.filter({ hasText: 'malformed' });
  await expect(malformed).toHaveCount(1);
  const letterId = await malformed.getAttribute('data-letter-id');
  page.once('dialog', (d) => void d.accept());
  await malformed.getByRole('button', { name: 'Drop' }).click();
  await expect(page.getByTestId('dlq-note')).toContainText(`Letter ${letterId} dropped`);
  await expect(letters).toHaveCount(1);

  await page.reload();
  await expect(page.getByRole('button', { name: /token set/ })).toBeVisible();
  await expect(who).toHaveText(/ · admin$/);
  await page.goto(`${cluster.uiUrl}/#/`);
  await expect(page.locator('tr[data-task-id="acl-1"]')).toHaveCount(1);
});

test('a server without /whoami: nothing disabled, the server refuses', async ({ page }) => {
  await page.route('**/api/v1/whoami', (r) => r.fulfill({ status: 404, contentType: 'text/plain', body: 'not found' }));
  await page.goto(`${cluster.uiUrl}/#/submit`);
  await SetToken(page, viewer);
  await page.getByTestId('task-file').fill(kTaskFile.replace('acl-1', 'acl-2'));
  const submit = page.getByRole('button', { name: 'Submit', exact: true });
  await ExpectAllowed(submit);
  await expect(page.getByTestId('whoami')).toHaveCount(0);
  await expect(page.getByTestId('needs-role')).toHaveCount(0);
  await submit.click();
  await expect(page.getByRole('alert')).toContainText('PERMISSION_DENIED');
  await expect(page.getByRole('alert')).toContainText('vera');
  await expect(page.getByRole('alert')).toContainText("Your token's role does not allow this");
});
