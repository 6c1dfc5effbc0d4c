// Issue 28 in the config file: `server.http.sse` (the 2024-11-05 HTTP+SSE transport, on unless
// false), `server.limits.blobCaps` (smaller blob caps per principal or client) and
// `tools.fromTemplates` / `tools.maxEnum`. What a valid file loads as, and the message a user sees
// for each broken value.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigFileError, loadConfig } from '../../src/config/load.js';
import { mergeSettings } from '../../src/config/merge.js';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';

const HEAD = 'sources:\n  - type: files\n    root: docs\n';

let dir: string;

beforeAll(() => {
  dir = makeTempDir('reservoir-client-limits-config-');
  writeTree(dir, { 'docs/a.md': '# a\n' });
});

afterAll(() => removeTree(dir));

function load(name: string, text: string): ReturnType<typeof loadConfig> {
  const path = join(dir, `${name}.yaml`);
  writeFileSync(path, text);
  return loadConfig(path, { display: 'reservoir.yaml', env: {} });
}

function problems(name: string, text: string): string[] {
  try {
    load(name, text);
  } catch (error) {
    if (error instanceof ConfigFileError) return [...error.problems];
    throw error;
  }
  return [];
}

describe('the issue 28 settings', () => {
  it('load as written, and sse is on unless turned off', () => {
    const config = load(
      'valid',
      `${HEAD}server:\n  http: { sse: false }\n  limits:\n    blobCaps:\n      - { clients: ['old-sdk@1.*'], maxBlobBytes: 2000000 }\n      - { principals: ['token:ci'], maxBlobBytes: 100000 }\ntools:\n  fromTemplates: true\n  maxEnum: 10\n`,
    );
    expect(config.server.limits?.blobCaps).toEqual([
      { clients: ['old-sdk@1.*'], maxBlobBytes: 2000000 },
      { principals: ['token:ci'], maxBlobBytes: 100000 },
    ]);
    expect(config.tools).toEqual({ fromTemplates: true, maxEnum: 10 });
    expect(mergeSettings(config, { roots: [], source: {} }).http?.sse).toBe(false);
    const plain = load('plain', `${HEAD}server:\n  http: { port: 0 }\n`);
    expect(mergeSettings(plain, { roots: [], source: {} }).http?.sse).toBe(true);
  });

  it.each([
    [
      'a blob cap for a principal of no kind',
      `${HEAD}server:\n  limits:\n    blobCaps: [{ principals: [carol], maxBlobBytes: 10 }]\n`,
      /server\.limits\.blobCaps\[0\]\.principals\[0\]: 'carol' does not say which kind of principal it is/,
    ],
    [
      'a blob cap of 0',
      `${HEAD}server:\n  limits:\n    blobCaps: [{ clients: [x], maxBlobBytes: 0 }]\n`,
      /server\.limits\.blobCaps\[0\]\.maxBlobBytes: expected at least 1, got 0/,
    ],
    [
      'a blob cap without its size',
      `${HEAD}server:\n  limits:\n    blobCaps: [{ clients: [x] }]\n`,
      /server\.limits\.blobCaps\[0\]\.maxBlobBytes: required, expected a number/,
    ],
    [
      'sse that is not a boolean',
      `${HEAD}server:\n  http: { sse: yes please }\n`,
      /server\.http\.sse/,
    ],
    ['a typo in tools', `${HEAD}tools:\n  fromTemplate: true\n`, /tools.*fromTemplate/],
    ['maxEnum over 100', `${HEAD}tools:\n  maxEnum: 101\n`, /tools\.maxEnum/],
  ])('refuse %s, naming the key', (_what, text, message) => {
    const found = problems(_what.replace(/\W+/g, '-'), text);
    expect(found.join('\n')).toMatch(message);
  });
});
