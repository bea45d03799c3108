// Browser tests of the dashboard against a real orchestrator and agents
// (tests/global-setup.ts). One worker: the tests share one system.
// `--project=screenshots` regenerates docs/screenshots/*.png instead.
import { defineConfig } from '@playwright/test';
import { kChromium, kChromiumArgs } from './tests/browser';

const use = {
  baseURL: process.env.APOLLO_UI_URL,
  headless: true,
  launchOptions: { executablePath: kChromium, args: kChromiumArgs },
  viewport: { width: 1280, height: 800 },
  timezoneId: 'Europe/Paris',
  trace: 'retain-on-failure' as const,
  screenshot: 'only-on-failure' as const,
};

export default defineConfig({
  testDir: 'tests',
  globalSetup: './tests/global-setup.ts',
  workers: 1,
  fullyParallel: false,
  retries: 0,
  forbidOnly: true,
  timeout: 90_000,
  expect: { timeout: 30_000 },
  // The JSON report feeds scripts/ui-failures.mjs (the end of `make test`).
  reporter: [['list'], ['json', { outputFile: 'playwright-report/report.json' }]],
  outputDir: 'test-results',
  projects: [
    { name: 'dashboard', testMatch: /(dashboard|sse|acl)\.spec\.ts/, use },
    { name: 'screenshots', testMatch: /screenshots\.spec\.ts/, use },
  ],
});
