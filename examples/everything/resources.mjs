// The conformance suites' resources, as a Reservoir provider of `test://` URIs: two static
// resources, one that "changes" every few seconds (for subscriptions) and a URI template.
import { NotFoundError } from 'mcp-reservoir';
import { PNG_1X1 } from './media.mjs';

const STATIC = [
  {
    info: {
      uri: 'test://static-text',
      name: 'Static Text Resource',
      description: 'A static text resource for testing',
      mimeType: 'text/plain',
    },
    contents: {
      uri: 'test://static-text',
      mimeType: 'text/plain',
      text: 'This is the content of the static text resource.',
    },
  },
  {
    info: {
      uri: 'test://static-binary',
      name: 'Static Binary Resource',
      description: 'A static binary resource (image) for testing',
      mimeType: 'image/png',
    },
    contents: { uri: 'test://static-binary', mimeType: 'image/png', blob: PNG_1X1 },
  },
  {
    info: {
      uri: 'test://watched-resource',
      name: 'Watched Resource',
      description: 'A resource that changes every few seconds, for subscriptions',
      mimeType: 'text/plain',
    },
    contents: null, // read live, below
  },
];

/** @param {{ changeEveryMs?: number }} [options] */
export function testResources({ changeEveryMs = 3000 } = {}) {
  let version = 0;
  const byUri = new Map(STATIC.map((r) => [r.info.uri, r]));
  const contentsOf = (uri) =>
    uri === 'test://watched-resource'
      ? { uri, mimeType: 'text/plain', text: `Watched resource content, version ${version}` }
      : byUri.get(uri)?.contents;
  return {
    name: 'test',
    root: 'test://',
    async list(after, limit) {
      const start = after === undefined ? 0 : STATIC.findIndex((r) => r.info.uri === after) + 1;
      const page = STATIC.slice(start, start + limit);
      const items = page.map((r) => r.info);
      return start + limit < STATIC.length ? { items, last: page.at(-1).info.uri } : { items };
    },
    isValidKey: (key) => byUri.has(key),
    async read(uri) {
      const contents = contentsOf(uri);
      if (contents === undefined) throw new NotFoundError(uri);
      return { contents: [contents] };
    },
    templates: () => [
      {
        uriTemplate: 'test://template/{id}/data',
        name: 'Template Resource',
        description: 'A resource template: the data of one item, by id',
        mimeType: 'application/json',
        async read(uri, { id }) {
          return {
            contents: [
              {
                uri,
                mimeType: 'application/json',
                text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` }),
              },
            ],
          };
        },
        complete: {
          id: (value) => ({ values: ['123', '456', '789'].filter((v) => v.startsWith(value)) }),
        },
      },
    ],
    watch(uri, onChange) {
      if (contentsOf(uri) === undefined) throw new NotFoundError(uri);
      if (uri !== 'test://watched-resource') return () => {};
      const timer = setInterval(() => {
        version += 1;
        onChange();
      }, changeEveryMs).unref();
      return () => clearInterval(timer);
    },
  };
}
