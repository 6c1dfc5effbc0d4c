// The error catalog in docs/errors.md, ERROR_CODES in core and the JSON-RPC map in mcp/ must agree.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../../src/core/errors.js';
import { JSONRPC_CODES, RESOURCE_NOT_FOUND_LEGACY } from '../../src/mcp/errors.js';

const doc = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
const rows = new Map(
  [...doc.matchAll(/^\| `([a-z_]+)` \| ([^|]+) \|/gm)].map((m) => [m[1]!, m[2]!.trim()]),
);

describe('error catalog', () => {
  it('documents every error code exactly once, and nothing else', () => {
    expect([...rows.keys()].sort()).toEqual([...ERROR_CODES].sort());
  });

  it('documents the JSON-RPC code each error is sent with', () => {
    for (const code of ERROR_CODES) {
      const wire = JSONRPC_CODES[code];
      const documented = rows.get(code)!;
      // Not-found is -32002 to 2025-era clients; the SDK sends -32602 to 2026-07-28 ones.
      if (wire === RESOURCE_NOT_FOUND_LEGACY) expect(documented).toMatch(/^-32002\b.* \/ -32602\b/);
      else expect(documented).toBe(String(wire));
    }
  });
});
