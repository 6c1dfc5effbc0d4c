/**
 * The Codex CLI keeps its servers in TOML: one `[mcp_servers.NAME]` table each. Setup writes its own
 * table and leaves every other line of the file as it was — no TOML library, no reformatting of what
 * the user wrote: the old table (and its sub-tables, e.g. `[mcp_servers.NAME.env]`) is cut out and
 * the new one appended. Values are JSON strings, which are valid TOML basic strings.
 */
import { ConfigError } from '../core/errors.js';

const BARE_KEY = /^[A-Za-z0-9_-]+$/;

function tomlKey(key: string): string {
  return BARE_KEY.test(key) ? key : JSON.stringify(key);
}

function tomlValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(tomlValue).join(', ')}]`;
  if (value !== null && typeof value === 'object') {
    return `{ ${Object.entries(value)
      .map(([k, v]) => `${tomlKey(k)} = ${tomlValue(v)}`)
      .join(', ')} }`;
  }
  throw new Error(`no TOML form for ${typeof value}`);
}

/** `[prefix.name]` and its `key = value` lines. */
export function tomlTable(prefix: string, name: string, entry: Record<string, unknown>): string {
  const lines = [
    `[${prefix}.${tomlKey(name)}]`,
    ...Object.entries(entry).map(([k, v]) => `${tomlKey(k)} = ${tomlValue(v)}`),
  ];
  return `${lines.join('\n')}\n`;
}

/** Whether a header line opens `[prefix.name]` or one of its sub-tables, in any quoting. */
function opensTable(line: string, prefix: string, name: string): boolean {
  const header = /^\s*\[(?!\[)\s*([^\]]*?)\s*\]\s*(?:#.*)?$/.exec(line);
  if (header === null) return false;
  const names = [name, JSON.stringify(name), `'${name}'`];
  return names.some((n) =>
    new RegExp(`^${prefix}\\s*\\.\\s*${n.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s*(\\.|$)`).test(
      header[1]!,
    ),
  );
}

const isHeader = (line: string): boolean => /^\s*\[/.test(line);

/** `text` with `[prefix.name]` (and sub-tables) replaced by `table`, or `table` appended. */
export function mergeTomlTable(
  text: string,
  prefix: string,
  name: string,
  table: string,
  file: string,
): { text: string; replaced: boolean } {
  const lines = text === '' ? [] : text.replace(/\n$/, '').split('\n');
  // A server written as dotted keys inside `[mcp_servers]` (`NAME.command = …`) cannot be cut out line by line.
  let inPrefix = false;
  for (const line of lines) {
    if (isHeader(line)) inPrefix = /^\s*\[\s*mcp_servers\s*\]/.test(line);
    else if (
      inPrefix &&
      new RegExp(`^\\s*["']?${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}["']?\\s*[.=]`).test(line)
    ) {
      throw new ConfigError(
        file,
        `defines "${name}" inside [${prefix}] as dotted keys; it was left as it is — replace it with the entry printed by --print yourself`,
      );
    }
  }
  const kept: string[] = [];
  let skipping = false;
  let replaced = false;
  for (const line of lines) {
    if (isHeader(line)) {
      skipping = opensTable(line, prefix, name);
      replaced ||= skipping;
    }
    if (!skipping) kept.push(line);
  }
  while (kept.length > 0 && kept.at(-1)!.trim() === '') kept.pop();
  const head = kept.length === 0 ? '' : `${kept.join('\n')}\n\n`;
  return { text: `${head}${table}`, replaced };
}
