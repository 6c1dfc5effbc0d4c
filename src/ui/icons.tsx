/** Line icons for sources and MIME kinds (inline SVG elements: no network, no inline style). */
import type { JSX } from 'preact';

const PATHS: Record<string, string> = {
  source:
    'M4 6c0-1.7 3.6-3 8-3s8 1.3 8 3-3.6 3-8 3-8-1.3-8-3zm0 0v12c0 1.7 3.6 3 8 3s8-1.3 8-3V6M4 12c0 1.7 3.6 3 8 3s8-1.3 8-3',
  directory: 'M3 6a2 2 0 0 1 2-2h4l2 2h8a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H5a2 2 0 0 1-2-2z',
  markdown: 'M4 5h16v14H4zM7 15V9l2.5 3L12 9v6m3-2 2 2 2-2m-2 2V9',
  image: 'M4 5h16v14H4zm3 11 4-5 3 4 2-2 3 3M9 9.5a1 1 0 1 0 0 .1',
  json: 'M8 4c-2 0-2 2-2 4s-2 4-2 4 2 0 2 4 0 4 2 4m8-16c2 0 2 2 2 4s2 4 2 4-2 0-2 4 0 4-2 4',
  csv: 'M4 5h16v14H4zM4 10h16M4 15h16M10 5v14',
  code: 'm8 8-4 4 4 4m8-8 4 4-4 4m-6 3 4-14',
  text: 'M14 3H6a2 2 0 0 0-2 2v14a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2V9zm0 0v6h6M8 13h8M8 17h6',
  binary: 'M6 4h12v16H6zM9 8h2v4H9zm4 0h2m-2 4h2m-6 4h2m2 0h2',
  search: 'M11 18a7 7 0 1 0 0-14 7 7 0 0 0 0 14zm5-2 5 5',
  copy: 'M9 9h11v11H9zM5 15H4V4h11v1',
  live: 'M12 12m-3 0a3 3 0 1 0 6 0 3 3 0 1 0-6 0M5 5a10 10 0 0 0 0 14M19 5a10 10 0 0 1 0 14',
};

export function Icon({ name, title }: { name: string; title?: string }): JSX.Element {
  return (
    <svg
      class="icon"
      viewBox="0 0 24 24"
      aria-hidden={title === undefined ? 'true' : undefined}
      role={title === undefined ? undefined : 'img'}
    >
      {title === undefined ? null : <title>{title}</title>}
      <path d={PATHS[name] ?? PATHS['text']} />
    </svg>
  );
}
