#!/usr/bin/env node
// Usage: node scripts/ui-failures.mjs [REPORT]   (default web/playwright-report/report.json)
// Prints, for each browser test the last `make test-ui` run failed, its
// error and the page as the browser saw it at the failure (Playwright's
// error-context.md: the accessibility tree), so the end of `make test` says
// why, not only which (a CI log is often kept by its tail). Prints nothing
// when nothing failed or there is no report.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

const report = process.argv[2] ?? 'web/playwright-report/report.json';
if (!existsSync(report)) process.exit(0);
const plain = (s) => String(s ?? '').replace(/\u001b\[[0-9;]*m/g, '');
const head = (s, n) => plain(s).split('\n').slice(0, n).join('\n');

const failed = [];
const walk = (suite, path) => {
  for (const spec of suite.specs ?? []) {
    for (const t of spec.tests ?? []) {
      for (const r of t.results ?? []) {
        if (r.status === 'passed' || r.status === 'skipped') continue;
        failed.push({ title: [...path, spec.title].join(' › '), line: `${spec.file}:${spec.line}`, r });
      }
    }
  }
  for (const s of suite.suites ?? []) walk(s, s.title && !s.title.endsWith('.ts') ? [...path, s.title] : path);
};
const json = JSON.parse(readFileSync(report, 'utf8'));
for (const s of json.suites ?? []) walk(s, []);
const base = dirname(resolve(report));
for (const { title, line, r } of failed) {
  console.log(`----- failed browser test ${title} (${line}), ${r.status} after ${(r.duration / 1000).toFixed(1)} s`);
  for (const e of r.errors?.length ? r.errors : [r.error]) if (e) console.log(head(e.message ?? e.value, 30));
  const ctx = (r.attachments ?? []).find((a) => a.name === 'error-context' && a.path);
  const file = ctx && resolve(base, ctx.path);
  if (file && existsSync(file)) {
    // Its error part repeats the one above: the page snapshot only.
    const text = readFileSync(file, 'utf8');
    const at = text.indexOf('# Page snapshot');
    console.log(`--- the page at the failure (${file}):`);
    console.log(head(at >= 0 ? text.slice(at) : text, 60));
  }
}
