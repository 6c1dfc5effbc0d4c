// Takes the explorer screenshots shown in the README (docs/explorer/*.png): a demo folder served by
// `reservoir serve --http`, photographed in Debian's Chromium at 1280×800 and phone width, light
// and dark. Run after `npm run build`: node scripts/explorer-screenshots.mjs [NAME…] (only those shots).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const repo = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(repo, 'docs/explorer');
mkdirSync(out, { recursive: true });

const demo = mkdtempSync(join(tmpdir(), 'reservoir-demo-'));
const files = {
  'handbook/README.md':
    '# Team handbook\n\nWelcome! This folder is served by **Reservoir** as MCP resources.\n\n## Where things are\n\n- `guides/` — how we work\n- `api/` — service code\n- `data/` — exports and reports\n\n> Pick a file on the left, or search.\n\n| Area | Owner |\n| --- | --- |\n| Guides | Ann |\n| API | Bob |\n',
  'handbook/guides/onboarding.md': '# Onboarding\n\n1. Get a token.\n2. Open the explorer.\n',
  'handbook/guides/release-process.md': '# Release process\n\nTag, build, publish.\n',
  'handbook/api/server.ts':
    "import { createReservoir, filesProvider } from 'mcp-reservoir';\n\n// Serve the handbook over stdio.\nconst reservoir = createReservoir({ providers: [filesProvider({ root: './handbook' })] });\nreservoir.serveStdio();\n\nexport function greet(name: string): string {\n  return `Hello, ${name}!`;\n}\n",
  'handbook/api/schema.sql':
    'CREATE TABLE users (\n  id INTEGER PRIMARY KEY,\n  login TEXT NOT NULL UNIQUE\n);\n',
  'handbook/data/quarterly-report.csv':
    'quarter,revenue,customers\nQ1,120000,310\nQ2,134500,352\nQ3,151200,390\nQ4,170900,441\n',
  'handbook/data/settings.json': JSON.stringify(
    {
      service: 'reservoir',
      replicas: 3,
      features: { explorer: true, search: true },
      owners: ['ann', 'bob'],
    },
    null,
    2,
  ),
};
for (const [path, text] of Object.entries(files)) {
  mkdirSync(dirname(join(demo, path)), { recursive: true });
  writeFileSync(join(demo, path), text);
}

const server = spawn(
  process.execPath,
  [
    join(repo, 'dist/cli/index.js'),
    'serve',
    join(demo, 'handbook'),
    '--http',
    '127.0.0.1:0',
    '--state-dir',
    join(demo, 'state'),
  ],
  { stdio: ['ignore', 'ignore', 'pipe'] },
);
const origin = await new Promise((resolve) => {
  let seen = '';
  server.stderr.on('data', (chunk) => {
    seen += chunk;
    const match = /"url":"(http:[^"]+)\/mcp"/.exec(seen);
    if (match) resolve(match[1]);
  });
});
const profile = mkdtempSync(join(tmpdir(), 'reservoir-shots-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
});

const only = process.argv.slice(2);

async function shot(name, { width, height, scheme, file, tab, query }) {
  if (only.length > 0 && !only.includes(name)) return;
  const page = await context.newPage();
  await page.setViewportSize({ width, height });
  await page.emulateMedia({ colorScheme: scheme });
  await page.goto(`${origin}/ui/`);
  await page.waitForSelector('.tree-row');
  if (file !== undefined) {
    await page.click(`.tree-row:has-text("${file}")`);
    await page.waitForSelector('.preview[aria-busy="false"]');
  }
  if (tab !== undefined) await page.click(`button[role="tab"]:has-text("${tab}")`);
  if (query !== undefined) {
    await page.fill('.search input[type="search"]', query);
    // search_resources: wait for the ranked hits' highlighted snippets.
    await page.waitForSelector('.hit .snippet mark');
  }
  await page.waitForTimeout(150);
  await page.screenshot({ path: join(out, `${name}.png`) });
  await page.close();
}

try {
  await shot('browse-light', { width: 1280, height: 800, scheme: 'light', file: 'README.md' });
  await shot('browse-dark', { width: 1280, height: 800, scheme: 'dark', file: 'README.md' });
  await shot('code-dark', { width: 1280, height: 800, scheme: 'dark', file: 'server.ts' });
  await shot('table-light', {
    width: 1280,
    height: 800,
    scheme: 'light',
    file: 'quarterly-report.csv',
  });
  await shot('search-light', {
    width: 1280,
    height: 800,
    scheme: 'light',
    tab: 'Search',
    query: 'report*',
  });
  await shot('search-dark', {
    width: 1280,
    height: 800,
    scheme: 'dark',
    tab: 'Search',
    query: 'explorer',
  });
  await shot('tools-dark', { width: 1280, height: 800, scheme: 'dark', tab: 'Tools' });
  await shot('phone-light', { width: 390, height: 844, scheme: 'light', file: 'README.md' });
  await shot('phone-dark', { width: 390, height: 844, scheme: 'dark', file: 'settings.json' });
} finally {
  await context.close();
  server.kill('SIGTERM');
  rmSync(profile, { recursive: true, force: true });
  rmSync(demo, { recursive: true, force: true });
}
