// Pins the outbound encoder on a tools/call result whose structuredContent holds a value with its
// JSON kept (core/kept-json.ts, what sql_query does with its rows): the bytes are exactly
// JSON.stringify's — member order in the message, the result and the structuredContent, undefined
// members left out, every other member serialised as usual — and the kept value is not serialised
// again (a toJSON inside it runs once, when its JSON was made). Anything the shortcut cannot write
// as JSON.stringify would (a toJSON on the way, a non-object structuredContent) goes the ordinary way.
// End to end: a sql_query answer on stdio, in both eras, serialises its rows once, for the text block
// and the structuredContent alike — short rows are serialised again, which costs less (its provider
// here is a double whose one value counts its serialisations; real answers against the SDK's:
// test/e2e/stdio-sql-query-answers.test.ts).
import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { keepJson, keptJson } from '../../../src/core/kept-json.js';
import { encodeMessage } from '../../../src/mcp/direct/encode.js';
import type { SqlProvider } from '../../../src/providers/sql/index.js';
import { KEEP_ROWS_JSON_FROM, sqlQueryTool } from '../../../src/providers/sql/tool.js';
import { createReservoir } from '../../../src/server/index.js';
import { connectInProcess } from '../../subscriptions/harness.js';

function encoded(message: unknown): string {
  const line = encodeMessage(message as JSONRPCMessage);
  expect(typeof line).toBe('string');
  return line as string;
}

/** Rows as a driver hands them over, their JSON kept as sql_query keeps it. */
function keptRows(rows: unknown[][]): unknown[][] {
  return keepJson(rows, JSON.stringify(rows));
}

const TRICKY = 'héllo — ☃ 𝄞 😀 "quoted" \\back\\ \u0000\u001f\u007f \n\r\t \u2028\u2029 </script>';

function toolAnswer(structured: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    result: {
      content: [{ type: 'text', text: `2 rows, 3 ms.\n${JSON.stringify(structured)}` }],
      structuredContent: structured,
      ...extra,
    },
    jsonrpc: '2.0',
    id: 'call-ü',
  };
}

describe('encodeMessage on a structuredContent member whose JSON was kept', () => {
  const rows = (): unknown[][] => [
    [1, TRICKY, null, true, 1.5, -0, { $base64: 'AAE=' }],
    [2, '', 0, false, 1e21, 2 ** 53 + 2, ['nested', { a: [null] }]],
  ];
  const cases: Record<string, () => unknown> = {
    'a sql_query answer': () =>
      toolAnswer({
        columns: ['id', 'text', 'n', 'b', 'f', 'z', 'o'],
        rows: keptRows(rows()),
        rowCount: 2,
        truncated: false,
        elapsedMs: 3,
      }),
    'kept rows first, last and twice, with undefined members': () => {
      const kept = keptRows(rows());
      return toolAnswer({ rows: kept, gone: undefined, again: kept, f: () => 1, last: kept });
    },
    'members around the result, isError and _meta': () => ({
      jsonrpc: '2.0',
      id: 4,
      result: {
        _meta: { 'x/y': 1 },
        structuredContent: { rows: keptRows([[TRICKY]]), note: undefined },
        content: [],
        isError: false,
      },
      extra: undefined,
    }),
    'an empty kept array': () => toolAnswer({ rows: keptRows([]), rowCount: 0 }),
  };
  for (const [name, make] of Object.entries(cases)) {
    it(`writes ${name} exactly as JSON.stringify`, () => {
      const message = make();
      expect(encoded(message)).toBe(JSON.stringify(message));
    });
  }

  it('does not serialise the kept value again', () => {
    let serialised = 0;
    const value = { toJSON: () => ((serialised += 1), 'once') };
    const rows = keptRows([[value]]);
    expect(serialised).toBe(1);
    const message = {
      jsonrpc: '2.0',
      id: 1,
      result: { content: [], structuredContent: { rows, rowCount: 1 } },
    };
    for (let i = 0; i < 2; i += 1)
      expect(encoded(message)).toBe(
        '{"jsonrpc":"2.0","id":1,"result":{"content":[],"structuredContent":{"rows":[["once"]],"rowCount":1}}}',
      );
    expect(serialised).toBe(1);
  });

  it('leaves a toJSON on the message, the result or the structuredContent to JSON.stringify', () => {
    const kept = keptRows([[1]]);
    const messages = [
      { ...toolAnswer({ rows: kept }), toJSON: () => ({ replaced: 'message' }) },
      {
        jsonrpc: '2.0',
        id: 1,
        result: { structuredContent: { rows: kept }, toJSON: () => ({ replaced: 'result' }) },
      },
      toolAnswer({ rows: kept, toJSON: () => ({ replaced: 'structured' }) }),
    ];
    for (const message of messages) {
      const line = encoded(message);
      expect(line).toBe(JSON.stringify(message));
      expect(line).toContain('"replaced"');
    }
  });

  it('writes a structuredContent without a kept member, or not an object, the ordinary way', () => {
    const kept = keptRows([[1]]);
    for (const structured of [{ rows: [[1]] }, [kept], null, 'text'])
      expect(
        encoded({ jsonrpc: '2.0', id: 1, result: { content: [], structuredContent: structured } }),
      ).toBe(
        JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          result: { content: [], structuredContent: structured },
        }),
      );
  });

  it('keeps JSON only for objects', () => {
    expect(keptJson(undefined)).toBeUndefined();
    expect(keptJson('rows')).toBeUndefined();
    expect(keptJson([1])).toBeUndefined();
    const rows = keptRows([[1]]);
    expect(keptJson(rows)).toBe('[[1]]');
  });
});

describe('a sql_query answer on stdio', () => {
  const cases = [
    ['2025', 'answered directly', false],
    ['2025', 'through the SDK', true],
    ['2026', 'through the SDK', false],
  ] as const;
  /** Calls sql_query over stdio in `era`; its one value is `value`, counting its serialisations. */
  async function answer(era: '2025' | '2026', meta: boolean, value: string) {
    const counted = { serialised: 0 };
    const provider = {
      database: 'app',
      dialect: 'postgres',
      maxRows: 10,
      statementTimeoutMs: 1000,
      root: 'db://app/',
      query: () =>
        Promise.resolve({
          columns: ['id', 'v'],
          rows: [[1, { toJSON: () => ((counted.serialised += 1), value) }]],
          rowCount: 1,
          truncated: false,
          elapsedMs: 2,
        }),
    } as unknown as SqlProvider;
    const reservoir = createReservoir({ providers: [] });
    reservoir.tools.add(sqlQueryTool(provider));
    const { client, close } = await connectInProcess(reservoir, era);
    try {
      const result = await client.callTool({
        name: 'sql_query_app',
        arguments: { sql: 'SELECT 1' },
        ...(meta ? { _meta: {} } : {}),
      });
      expect(result.content).toEqual([
        { type: 'text', text: `1 row, 2 ms.\n{"columns":["id","v"],"rows":[[1,"${value}"]]}` },
      ]);
      expect(result.structuredContent).toEqual({
        columns: ['id', 'v'],
        rows: [[1, value]],
        rowCount: 1,
        truncated: false,
        elapsedMs: 2,
      });
      return counted.serialised;
    } finally {
      await close();
      await reservoir.close();
    }
  }

  for (const [era, path, meta] of cases) {
    it(`serialises its rows once (${era} era, ${path})`, async () => {
      expect(await answer(era, meta, 'x'.repeat(KEEP_ROWS_JSON_FROM))).toBe(1);
    });

    it(`serialises short rows again rather than keep their JSON (${era} era, ${path})`, async () => {
      expect(await answer(era, meta, 'x')).toBe(2);
    });
  }
});
