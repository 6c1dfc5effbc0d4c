// The page functions these tests hand to Chromium use the DOM's types.
/// <reference lib="dom" />
/**
 * Shared by the explorer tests: a Reservoir serving a directory over real HTTP with the explorer on
 * (in process, with optional tokens and access rules), and Debian's Chromium driven by
 * playwright-core (never a downloaded browser). Without /usr/bin/chromium the browser tests are
 * skipped with the reason printed. Each page records what would betray a script run by resource
 * content: dialogs, and the `pwned` global the test payloads try to set.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { AccessPolicy, type AccessOptions } from '../../src/core/access.js';
import type { Prompt } from '../../src/core/prompts.js';
import type { Provider } from '../../src/core/types.js';
import { createAuthenticator } from '../../src/http/auth.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { builtinTools, whoAmITool } from '../../src/tools/index.js';
import { ensureBuilt } from '../helpers/build.js';
import type { Token } from '../security/harness.js';

export const CHROMIUM = '/usr/bin/chromium';
export const HAS_CHROMIUM = existsSync(CHROMIUM);
if (!HAS_CHROMIUM)
  process.stderr.write(
    `explorer browser tests skipped: ${CHROMIUM} is missing (apt-get install chromium)\n`,
  );

export interface Explorer {
  reservoir: Reservoir;
  origin: string;
  close(): Promise<void>;
}

export interface ExplorerOptions {
  root: string;
  pageSize?: number;
  tokens?: Token[];
  access?: AccessOptions;
  maxReadBytes?: number;
  prompts?: Prompt[];
  /**
   * Offer `search_resources` (full-text index in a temp state directory), its first build done
   * before this returns — a build still running when the page searches answers from part of the
   * files with an "Indexing" note, then searches again (on a loaded machine past the tool's 1 s).
   */
  search?: boolean;
  /**
   * How long search_resources waits for the index's first build (default the tool's 1 s); when
   * set, the index is not built ahead: it opens when the page loads, as for a user.
   */
  firstBuildWaitMs?: number;
  /** Wraps the files provider (e.g. to hold some reads back). */
  wrap?: (provider: Provider) => Provider;
  /** More sources served beside the files root (e.g. a SQL database). */
  providers?: Provider[];
}

/** Serves `root` over HTTP on a free port with the explorer at /ui/. */
export async function startExplorer(options: ExplorerOptions): Promise<Explorer> {
  await ensureBuilt();
  const stateDir =
    options.search === true ? mkdtempSync(join(tmpdir(), 'reservoir-explorer-state-')) : undefined;
  const reservoir = createReservoir({
    ...(stateDir === undefined ? {} : { search: { stateDir } }),
    providers: [
      (options.wrap ?? ((p: Provider) => p))(
        filesProvider({
          root: options.root,
          ...(options.maxReadBytes === undefined ? {} : { maxReadBytes: options.maxReadBytes }),
        }),
      ),
      ...(options.providers ?? []),
    ],
    explorerApp: true,
    ...(options.prompts === undefined ? {} : { prompts: options.prompts }),
    ...(options.pageSize === undefined ? {} : { pageSize: options.pageSize }),
    ...(options.access === undefined ? {} : { access: new AccessPolicy(options.access) }),
  });
  const search = reservoir.search;
  for (const tool of builtinTools(
    reservoir.registry,
    search === undefined
      ? {}
      : {
          search: {
            open: () => search.open(),
            ...(options.firstBuildWaitMs === undefined
              ? {}
              : { firstBuildWaitMs: options.firstBuildWaitMs }),
          },
        },
  ))
    reservoir.tools.add(tool);
  reservoir.tools.add(whoAmITool(reservoir.registry));
  if (search !== undefined && options.firstBuildWaitMs === undefined)
    await (await search.open()).idle();
  const auth =
    options.tokens === undefined
      ? undefined
      : createAuthenticator({
          tokens: options.tokens.map(({ name, sha256, scopes }) => ({ name, sha256, scopes })),
        });
  const endpoint = await reservoir.listen({
    port: 0,
    ui: true,
    ...(auth === undefined ? {} : { auth }),
  });
  const close = async (): Promise<void> => {
    await reservoir.close();
    if (stateDir !== undefined) rmSync(stateDir, { recursive: true, force: true });
  };
  return { reservoir, origin: new URL(endpoint.url).origin, close };
}

export const BROWSER_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface BrowserHandle {
  browser: Browser;
  close(): Promise<void>;
}

/** Launches Debian's Chromium with a fresh profile directory. */
export async function launchBrowser(): Promise<BrowserHandle> {
  const profile = mkdtempSync(join(tmpdir(), 'reservoir-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: BROWSER_ARGS,
    headless: true,
    permissions: ['clipboard-read', 'clipboard-write'],
  });
  const browser = context.browser();
  // A persistent context has no Browser object in some versions: keep the context as the handle.
  const handle = {
    browser: browser ?? (context as unknown as Browser),
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
  contexts.set(handle, context);
  return handle;
}

const contexts = new WeakMap<
  BrowserHandle,
  Awaited<ReturnType<typeof chromium.launchPersistentContext>>
>();

/** A new, blank tab of the browser's one context (the explorer's pages' storage and blob: URLs). */
export function newTab(handle: BrowserHandle): Promise<Page> {
  return contexts.get(handle)!.newPage();
}

export interface PageOptions {
  viewport?: { width: number; height: number };
  colorScheme?: 'light' | 'dark';
  /** Put this token in sessionStorage before the page loads (as the token form would). */
  token?: string;
  /** Runs on the page before it loads (to route its requests, say). */
  beforeLoad?: (page: Page) => Promise<unknown>;
}

export interface WatchedPage {
  page: Page;
  dialogs: string[];
  /** Requests to any other origin than the server's. */
  foreign: string[];
  close(): Promise<void>;
}

/** Opens `origin`/ in a new page of the browser, watching dialogs and foreign requests. */
export async function openExplorer(
  handle: BrowserHandle,
  origin: string,
  options: PageOptions = {},
): Promise<WatchedPage> {
  const context = contexts.get(handle)!;
  const page = await context.newPage();
  await page.setViewportSize(options.viewport ?? { width: 1280, height: 800 });
  await page.emulateMedia({ colorScheme: options.colorScheme ?? 'light' });
  const dialogs: string[] = [];
  const foreign: string[] = [];
  page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
  page.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith(origin) && !url.startsWith('blob:') && !url.startsWith('data:'))
      foreign.push(url);
  });
  if (options.token !== undefined) {
    const token = options.token;
    await page.addInitScript((value) => sessionStorage.setItem('reservoir.token', value), token);
  }
  await options.beforeLoad?.(page);
  await page.goto(`${origin}/`);
  return { page, dialogs, foreign, close: () => page.close() };
}

/** Whether any payload managed to set its flag. */
export function pwned(page: Page): Promise<unknown> {
  return page.evaluate(() => (window as unknown as { pwned?: unknown }).pwned);
}
