/**
 * MCP `icons` on resources: one short icon per MIME kind. Over HTTP, served by Reservoir itself at
 * `/ui/icons/KIND.svg` and named by an absolute URL on the origin the client reached (the request's
 * Host, which passed the allowed-host check): ~60 bytes an item, and a host fetches each of the
 * eight pictures once. Over stdio there is no origin to name: the picture could only go inline as
 * a `data:` URI (at most MAX_INLINE_ICON_BYTES, ~300–370 bytes an item, a listing's bytes about
 * tripled), so it does only when the config asks (`hints.resourceIcons: always`). The server,
 * tools, prompts and templates carry their own `data:` icons on every transport
 * (src/mcp/inline-icons.ts), so a stdio host still has a picture for each source's templates.
 */
import type { ResourceIconMode } from '../core/hints.js';
import type { Icon, ResourceInfo } from '../core/types.js';

export const RESOURCE_ICONS_PATH = '/ui/icons/';

export type ResourceKind =
  'directory' | 'markdown' | 'image' | 'json' | 'csv' | 'code' | 'text' | 'binary';

/** One drawing per kind, in the line style of the explorer's own icons (24×24, stroked). */
const DRAWINGS: Record<ResourceKind, string> = {
  directory: 'M3 6a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2z',
  markdown: 'M4 5h16v14H4zM7 15V9l2.5 3L12 9v6m3-2 2 2 2-2m-2 2V9',
  image: 'M4 5h16v14H4zm3 11 4-5 3 4 2-2 3 3M9 9.5a1 1 0 1 0 0 .1',
  json: 'M8 4c-2 0-2 2-2 4s-2 4-2 4 2 0 2 4 0 4 2 4m8-16c2 0 2 2 2 4s2 4 2 4-2 0-2 4 0 4-2 4',
  csv: 'M4 5h16v14H4zM4 10h16M4 15h16M10 5v14',
  code: 'm8 8-4 4 4 4m8-8 4 4-4 4m-6 3 4-14',
  text: 'M14 3H6a2 2 0 0 0-2 2v14a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2V9zm0 0v6h6M8 13h8M8 17h6',
  binary: 'M6 4h12v16H6zM9 8h2v4H9zm4 0h2m-2 4h2m-6 4h2m2 0h2',
};

export const RESOURCE_KINDS = Object.keys(DRAWINGS) as ResourceKind[];

/** The picture of one kind: a mid-tone stroke readable on light and dark backgrounds alike. */
export function resourceIconSvg(kind: ResourceKind): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" width="24" height="24" fill="none" stroke="#3f7fc4" stroke-width="2" stroke-linecap="round" stroke-linejoin="round"><path d="${DRAWINGS[kind]}"/></svg>`;
}

/** Longest inline icon: a `data:` URI past it would be a drawing that does not belong here. */
export const MAX_INLINE_ICON_BYTES = 512;

/**
 * The picture of one kind as a `data:` URI: the SVG with single quotes and only the characters a
 * URI cannot hold escaped (shorter than base64), no width or height (the view box sizes it).
 */
export function inlineResourceIcon(kind: ResourceKind): string {
  const markup = `<svg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 24 24' fill='none' stroke='#3f7fc4' stroke-width='2' stroke-linecap='round' stroke-linejoin='round'><path d='${DRAWINGS[kind]}'/></svg>`;
  return `data:image/svg+xml,${markup.replace(/[<>#% ]/g, (c) => encodeURIComponent(c))}`;
}

const INLINE_ICONS = new Map<ResourceKind, Icon[]>(
  RESOURCE_KINDS.map((kind) => [
    kind,
    [{ src: inlineResourceIcon(kind), mimeType: 'image/svg+xml', sizes: ['any'] }],
  ]),
);

const CODE =
  /^(text\/(x-[\w+.-]+|tsx|javascript|css|html|xml|x-sh)|application\/(javascript|ecmascript|typescript|xml|x-sh|sql|graphql|x-yaml|yaml|toml))$/;

/** The kind a resource is drawn as, from its MIME type (and a trailing `/` for directories). */
export function resourceKind(mimeType: string | undefined, uri: string): ResourceKind {
  const type = (mimeType ?? '').split(';')[0]!.trim().toLowerCase();
  if (type === 'inode/directory' || uri.endsWith('/')) return 'directory';
  if (type === 'text/markdown') return 'markdown';
  if (type.startsWith('image/')) return 'image';
  if (/[/+]json$/.test(type)) return 'json';
  if (type === 'text/csv' || type === 'text/tab-separated-values') return 'csv';
  if (CODE.test(type) || type.includes('yaml')) return 'code';
  if (type.startsWith('text/') || type === '') return 'text';
  return 'binary';
}

/**
 * Gives each resource without icons of its own the icon of its kind, as `mode` says
 * (core/hints.ts): by URL on `origin` (e.g. `http://127.0.0.1:7337`); without an origin (stdio)
 * inline as a `data:` URI only in mode `always`. The icons of a page are shared objects: one per kind.
 */
export function withResourceIcons(
  items: ResourceInfo[],
  origin: string | undefined,
  mode: ResourceIconMode = 'auto',
): ResourceInfo[] {
  if (mode === 'off' || (origin === undefined && mode !== 'always')) return items;
  const byKind = new Map<ResourceKind, Icon[]>();
  return items.map((item) => {
    if (item.icons !== undefined) return item;
    const kind = resourceKind(item.mimeType, item.uri);
    let icons = origin === undefined ? INLINE_ICONS.get(kind) : byKind.get(kind);
    if (icons === undefined)
      byKind.set(kind, (icons = [{ src: `${origin}${RESOURCE_ICONS_PATH}${kind}.svg` }]));
    return { ...item, icons };
  });
}

/** The origin an HTTP request reached (scheme and Host as received), or undefined off HTTP. */
export function requestOrigin(request: Request | undefined): string | undefined {
  if (request === undefined) return undefined;
  try {
    const url = new URL(request.url);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : undefined;
  } catch {
    return undefined;
  }
}
