// Starts the system once for every test (they share it and run one at a
// time); the function returned stops it. Fails — does not skip — when the
// browser is missing.

import { existsSync } from 'node:fs';
import type { FullConfig } from '@playwright/test';
import { StartCluster } from './cluster';
import { kChromium } from './browser';

export default async function globalSetup(_config: FullConfig): Promise<() => Promise<void>> {
  if (!existsSync(kChromium)) {
    throw new Error(`${kChromium} is missing: the browser tests need Debian's chromium (apt-get install chromium; make deps)`);
  }
  const cluster = await StartCluster();
  process.env.APOLLO_UI_URL = cluster.uiUrl;
  process.env.APOLLO_HTTP_URL = cluster.httpUrl;
  process.env.APOLLO_TEST_DIR = cluster.dir;
  process.env.APOLLO_HAS_STREAM = cluster.hasStream ? '1' : '';
  if (process.env.APOLLO_REQUIRE_STREAM && !cluster.hasStream) {
    await cluster.Stop(true);
    throw new Error('APOLLO_REQUIRE_STREAM is set but the orchestrator does not serve /api/v1/stream');
  }
  return async () => {
    await cluster.Stop(process.env.KEEP_TEST_DIR !== undefined);
  };
}
