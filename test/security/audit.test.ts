// Issue 6, item 7: the audit log through the integrated server. One line per operation of every kind
// (list, read, template read, completion, prompts/get, tools/call, subscribe) naming the principal,
// the method, the URI or name, the outcome, the bytes read and the duration — and never content,
// argument values or tokens. Lines wait in the buffer and are written on reservoir.close(); a
// subscriber of the `reservoir:operation` diagnostics channel sees the very same records.
import { existsSync, readFileSync } from 'node:fs';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessPolicy } from '../../src/core/access.js';
import { createAuthenticator } from '../../src/http/auth.js';
import type { HttpEndpoint } from '../../src/http/app.js';
import { OPERATION_CHANNEL, type OperationRecord } from '../../src/policy/index.js';
import { filesProvider } from '../../src/providers/files/index.js';
import { createReservoir, type Reservoir } from '../../src/server/index.js';
import { builtinTools } from '../../src/tools/index.js';
import { dirUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { closeClient, connectWithToken, makeToken, settle } from './harness.js';

const CONTENT = `AUDIT-CONTENT-${Date.now().toString(36)}-never-logged`;
const ARGUMENT = 'argument-value-never-logged';
const auditor = makeToken('auditor', ['docs']);
const ALLOWED_FIELDS = [
  'time',
  'principal',
  'principalKind',
  'method',
  'uri',
  'name',
  'outcome',
  'code',
  'bytes',
  'durationMs',
];

let root: string;
let logDir: string;
let logPath: string;
let base: string;
let reservoir: Reservoir;
let endpoint: HttpEndpoint;
const published: OperationRecord[] = [];
const onRecord = (message: unknown): void => {
  const record = message as OperationRecord;
  if (record.principal === auditor.name) published.push(record);
};

beforeAll(async () => {
  root = makeTempDir('reservoir-audit-');
  logDir = makeTempDir('reservoir-audit-log-');
  logPath = join(logDir, 'nested', 'audit.log');
  writeTree(root, {
    'docs/guide.md': `${CONTENT}\nsecond line\n`,
    'secrets/key.txt': `${CONTENT} secret\n`,
  });
  base = dirUri(root);
  subscribe(OPERATION_CHANNEL, onRecord);
  reservoir = createReservoir({
    providers: [filesProvider({ root })],
    prompts: [
      {
        name: 'summarise',
        description: 'Summarise the guide',
        arguments: [{ name: 'tone', required: false }],
        messages: (args) => [
          {
            role: 'user',
            content: { type: 'text', text: `Summarise in a ${args['tone'] ?? 'plain'} tone.` },
          },
          { role: 'user', content: { type: 'resource_ref', uri: `${base}docs/guide.md` } },
        ],
      },
    ],
    policy: { audit: { sink: 'file', path: logPath, flushIntervalMs: 60_000 } },
    access: new AccessPolicy({
      rules: [{ scopes: ['docs'], allow: [`${base}docs/**`, 'prompt:*', 'tool:*'] }],
    }),
  });
  for (const tool of builtinTools(reservoir.registry)) reservoir.tools.add(tool);
  endpoint = await reservoir.listen({
    host: '127.0.0.1',
    port: 0,
    auth: createAuthenticator({
      tokens: [{ name: auditor.name, sha256: auditor.sha256, scopes: auditor.scopes }],
    }),
  });
});

afterAll(async () => {
  unsubscribe(OPERATION_CHANNEL, onRecord);
  await reservoir?.close();
  removeTree(root);
  removeTree(logDir);
});

describe('the audit log', () => {
  it('records every kind of operation, flushed on close, and the diagnostics channel sees the same records', async () => {
    const guide = `${base}docs/guide.md`;
    const client = await connectWithToken('2025', endpoint.url, auditor.token);
    try {
      await client.listResources();
      await client.readResource({ uri: guide });
      await client.readResource({ uri: `${guide}?lines=1-1` });
      await client.complete({
        ref: { type: 'ref/resource', uri: `${base}{+path}` },
        argument: { name: 'path', value: 'do' },
      });
      await client.getPrompt({ name: 'summarise', arguments: { tone: ARGUMENT } });
      await client.callTool({ name: 'read_resource', arguments: { uri: guide } });
      expect(
        (
          await client.callTool({
            name: 'read_resource',
            arguments: { uri: `${base}secrets/key.txt` },
          })
        ).isError,
      ).toBe(true);
      expect(
        (
          await client.callTool({
            name: 'read_resource',
            arguments: { uri: `${base}docs/gone.md` },
          })
        ).isError,
      ).toBe(true);
      expect(
        (await client.callTool({ name: 'read_resource', arguments: { uri: 'not a uri' } })).isError,
      ).toBe(true);
      await client.callTool({ name: 'find_resources', arguments: { name: ARGUMENT } });
      await client.subscribeResource({ uri: guide });
      expect((await settle(client.readResource({ uri: `${base}docs/missing.md` }))).ok).toBe(false);
    } finally {
      await closeClient(client);
    }

    // Buffered (flush interval 60 s): nothing written before close.
    expect(existsSync(logPath) ? readFileSync(logPath, 'utf8') : '').toBe('');
    await reservoir.close();
    const text = readFileSync(logPath, 'utf8');
    const lines = text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as OperationRecord);
    const mine = lines.filter((r) => r.principal === auditor.name);

    const find = (method: string, target: { uri?: string; name?: string }): OperationRecord => {
      const found = mine.find(
        (r) =>
          r.method === method &&
          (target.uri === undefined || r.uri === target.uri) &&
          (target.name === undefined || r.name === target.name),
      );
      expect(found, `${method} ${JSON.stringify(target)}`).toBeDefined();
      return found!;
    };
    expect(find('resources/list', {})).toMatchObject({ outcome: 'ok' });
    expect(find('resources/read', { uri: guide })).toMatchObject({
      outcome: 'ok',
      bytes: Buffer.byteLength(`${CONTENT}\nsecond line\n`),
    });
    expect(find('resources/read', { uri: `${guide}?lines=1-1` })).toMatchObject({
      outcome: 'ok',
      bytes: Buffer.byteLength(`${CONTENT}\n`),
    });
    // completion/complete is not a resources/* method: its target (the template) is in `name`.
    expect(find('completion/complete', { name: `${base}{+path}` })).toMatchObject({
      outcome: 'ok',
    });
    expect(find('prompts/get', { name: 'summarise' })).toMatchObject({ outcome: 'ok' });
    // read_resource is audited like resources/read: the URI asked for, the outcome, the bytes.
    expect(find('tools/call', { name: 'read_resource', uri: guide })).toMatchObject({
      outcome: 'ok',
      bytes: Buffer.byteLength(`${CONTENT}\nsecond line\n`),
    });
    // A denied resource is recorded as the caller was answered: not found, with its URI.
    expect(
      find('tools/call', { name: 'read_resource', uri: `${base}secrets/key.txt` }),
    ).toMatchObject({ outcome: 'error', code: 'not_found' });
    expect(find('tools/call', { name: 'read_resource', uri: `${base}docs/gone.md` })).toMatchObject(
      { outcome: 'error', code: 'not_found' },
    );
    expect(find('tools/call', { name: 'read_resource', uri: 'not a uri' })).toMatchObject({
      outcome: 'error',
      code: 'invalid_uri',
    });
    expect(find('tools/call', { name: 'find_resources' })).toMatchObject({ outcome: 'ok' });
    expect(find('resources/subscribe', { uri: guide })).toMatchObject({ outcome: 'ok' });
    expect(find('resources/read', { uri: `${base}docs/missing.md` })).toMatchObject({
      outcome: 'error',
      code: 'not_found',
    });

    for (const record of lines) {
      expect(
        Object.keys(record).every((key) => ALLOWED_FIELDS.includes(key)),
        JSON.stringify(record),
      ).toBe(true);
      expect(record.principal).toBe(auditor.name);
      expect(record.principalKind).toBe('token');
      expect(typeof record.method).toBe('string');
      expect(record.outcome === 'ok' || record.outcome === 'error').toBe(true);
      expect(typeof record.durationMs).toBe('number');
      expect(record.durationMs).toBeGreaterThanOrEqual(0);
      expect(Number.isNaN(Date.parse(record.time))).toBe(false);
    }
    // Never content, argument values, tokens or their digests.
    for (const forbidden of [
      CONTENT,
      'second line',
      ARGUMENT,
      auditor.token,
      auditor.sha256,
      'Bearer',
    ])
      expect(text).not.toContain(forbidden);

    // The diagnostics channel saw the very same records, in the same order.
    expect(published).toEqual(mine);
  });
});
