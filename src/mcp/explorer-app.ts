/**
 * The explorer as an MCP App (the `io.modelcontextprotocol/ui` extension): a `ui://` resource holding
 * the explorer page (script and style inlined, since a host renders it in a sandboxed frame) and the
 * `open_explorer` tool whose `_meta.ui.resourceUri` points at it. Inside the host the page reaches
 * this server through the host's App bridge; the resources a user picks go back to the host as
 * `resource_link` blocks. Both are offered only to clients that declare the extension with the MCP
 * App MIME type: other hosts see no new tool, and reading the URI is answered as a missing resource.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { getUiCapability, RESOURCE_MIME_TYPE } from '@modelcontextprotocol/ext-apps/server';
import { z } from 'zod';
import type { ClientCapabilities } from '../core/input.js';
import { defineTool, type Tool } from '../core/tools.js';
import type { Icon, TextContents } from '../core/types.js';
import { EXPLORER_ICONS } from './inline-icons.js';
import { definedProps } from '../core/defined.js';

export const EXPLORER_APP_URI = 'ui://reservoir/explorer.html';
export const OPEN_EXPLORER = 'open_explorer';

/** A resource served by the MCP edge itself (not a provider), offered to some clients only. */
export interface AppResource {
  uri: string;
  name: string;
  title: string;
  mimeType: string;
  icons: Icon[];
  offeredTo(capabilities: ClientCapabilities): boolean;
  read(): TextContents;
}

/** Whether the client renders MCP Apps (declares the extension with the App MIME type). */
export function rendersMcpApps(capabilities: ClientCapabilities): boolean {
  const ui = getUiCapability(capabilities as Parameters<typeof getUiCapability>[0]);
  return ui?.mimeTypes?.includes(RESOURCE_MIME_TYPE) === true;
}

/** Where the build writes the single-file App page: `<package>/dist/ui/app.html`. */
export function defaultAppPage(): string {
  return fileURLToPath(new URL('../../dist/ui/app.html', import.meta.url));
}

export interface ExplorerApp {
  tool: Tool;
  resource: AppResource;
}

export function explorerApp(page = defaultAppPage()): ExplorerApp {
  let html: string | undefined;
  const resource: AppResource = {
    uri: EXPLORER_APP_URI,
    name: 'explorer',
    title: 'Reservoir explorer',
    mimeType: RESOURCE_MIME_TYPE,
    icons: EXPLORER_ICONS,
    offeredTo: rendersMcpApps,
    read() {
      // Read on first use and kept: the page is part of the installed package.
      html ??= readFileSync(page, 'utf8');
      return {
        uri: EXPLORER_APP_URI,
        mimeType: RESOURCE_MIME_TYPE,
        text: html,
        _meta: { ui: { csp: { connectDomains: [], resourceDomains: [] }, prefersBorder: true } },
      } as TextContents;
    },
  };
  const tool = defineTool({
    name: OPEN_EXPLORER,
    title: 'Open the explorer',
    description:
      'Opens the Reservoir explorer inside the host: the user browses, searches and previews what this server serves and picks ' +
      'resources, which come back into the conversation as resource links.',
    input: z.strictObject({
      under: z
        .string()
        .min(1)
        .optional()
        .describe('A URI prefix to start browsing at, e.g. "file:///srv/docs/guides/".'),
    }),
    output: z.object({ resourceUri: z.string(), under: z.string().optional() }),
    annotations: {
      title: 'Open the explorer',
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
    icons: EXPLORER_ICONS,
    meta: { ui: { resourceUri: EXPLORER_APP_URI }, 'ui/resourceUri': EXPLORER_APP_URI },
    offeredTo: rendersMcpApps,
    call({ under }) {
      const text =
        'The explorer is open: pick resources there and they come back here as resource links.';
      return {
        content: [{ type: 'text', text }],
        structuredContent: {
          resourceUri: EXPLORER_APP_URI,
          ...definedProps({ under }),
        },
      };
    },
  });
  return { tool, resource };
}
