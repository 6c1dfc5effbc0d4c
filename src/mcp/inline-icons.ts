/**
 * Reservoir's MCP `icons`: small SVGs as `data:` URIs (no request to any host), one light and one
 * dark variant each, for the server, tools, prompts and resource templates. Hosts that show icons
 * (and the explorer) use them; others ignore the field.
 */
import type { Icon } from '../core/types.js';

function svg(body: string, colour: string): string {
  const markup = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none" stroke="${colour}" stroke-width="2" stroke-linecap="round" stroke-linejoin="round">${body}</svg>`;
  return `data:image/svg+xml;base64,${Buffer.from(markup, 'utf8').toString('base64')}`;
}

function pair(body: string): Icon[] {
  return [
    { src: svg(body, '#1f5fa8'), mimeType: 'image/svg+xml', sizes: ['any'], theme: 'light' },
    { src: svg(body, '#8fc1ff'), mimeType: 'image/svg+xml', sizes: ['any'], theme: 'dark' },
  ];
}

/** A reservoir: water held behind a dam. */
export const SERVER_ICONS: Icon[] = pair(
  '<path d="M3 6c3 2 6-2 9 0s6-2 9 0"/><path d="M3 12c3 2 6-2 9 0s6-2 9 0"/><path d="M3 18c3 2 6-2 9 0s6-2 9 0"/>',
);
/** A wrench. */
export const TOOL_ICONS: Icon[] = pair(
  '<path d="M14.7 6.3a4 4 0 0 0-5.4 5.4L3 18l3 3 6.3-6.3a4 4 0 0 0 5.4-5.4l-2.5 2.5-2.5-2.5z"/>',
);
/** A speech bubble. */
export const PROMPT_ICONS: Icon[] = pair(
  '<path d="M21 15a2 2 0 0 1-2 2H7l-4 4V5a2 2 0 0 1 2-2h14a2 2 0 0 1 2 2z"/>',
);
/** A document with a placeholder. */
export const TEMPLATE_ICONS: Icon[] = pair(
  '<path d="M14 2H6a2 2 0 0 0-2 2v16a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2V8z"/><path d="M14 2v6h6"/><path d="M9 15h6"/>',
);
/** A window: the explorer. */
export const EXPLORER_ICONS: Icon[] = pair(
  '<rect x="3" y="4" width="18" height="16" rx="2"/><path d="M3 9h18"/><path d="M9 9v11"/>',
);
