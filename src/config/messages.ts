/**
 * Turns zod issues into the messages users read: the field path as written in the file
 * (`sources[1].root`), what was expected and what was found, and a "did you mean" for typos.
 */
import type { z } from 'zod';
import { UNKNOWN_KEYS_TAG } from './schema.js';

/** One problem in a config file, located by field path (and by line when known). */
export interface ConfigProblem {
  /** Field path segments, e.g. ['sources', 1, 'root']; empty for the whole file. */
  path: (string | number)[];
  message: string;
}

/** `sources[1].root` from ['sources', 1, 'root']. */
export function formatPath(path: readonly (string | number | symbol)[]): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else {
      const key = String(segment);
      const plain = /^[A-Za-z_$][\w$-]*$/.test(key);
      out += plain ? (out === '' ? key : `.${key}`) : `[${JSON.stringify(key)}]`;
    }
  }
  return out;
}

/** Describes a value found in the file: `a number (42)`, `a string ('x')`, `a list`. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return value.length === 0 ? 'an empty list' : 'a list';
  switch (typeof value) {
    case 'string':
      return `a string (${quote(value)})`;
    case 'number':
      return `a number (${value})`;
    case 'boolean':
      return `${value}`;
    case 'object':
      return 'an object';
    default:
      return typeof value;
  }
}

const EXPECTED: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  array: 'a list',
  object: 'an object',
};

/** The problems one zod issue stands for (an unknown-keys issue is one per key). */
export function problemsOf(issue: z.core.$ZodIssue, input: unknown): ConfigProblem[] {
  const path = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
  const found = 'input' in issue ? issue.input : valueAt(input, path);
  switch (issue.code) {
    case 'unrecognized_keys': {
      const known = issue.message.startsWith(UNKNOWN_KEYS_TAG)
        ? issue.message.slice(UNKNOWN_KEYS_TAG.length).split(',')
        : [];
      return issue.keys.map((key) => ({ path: [...path, key], message: unknownKey(key, known) }));
    }
    case 'invalid_type': {
      // A schema may say what it expects in its own words ('expected a whole number').
      const expected =
        isCustom(issue.message) && issue.message.startsWith('expected ')
          ? issue.message.slice(9)
          : (EXPECTED[issue.expected] ?? issue.expected);
      if (found === undefined) return [{ path, message: `required, expected ${expected}` }];
      return [{ path, message: `expected ${expected}, got ${describeValue(found)}` }];
    }
    case 'invalid_value': {
      const options = issue.values.map((v) => quote(String(v))).join(', ');
      const expected = issue.values.length === 1 ? options : `one of ${options}`;
      return [
        {
          path,
          message: `expected ${expected}, got ${typeof found === 'string' ? quote(found) : describeValue(found)}`,
        },
      ];
    }
    case 'too_small':
    case 'too_big': {
      if (!isCustom(issue.message) && (issue.origin === 'number' || issue.origin === 'int')) {
        const bound =
          issue.code === 'too_small'
            ? `${issue.inclusive === false ? 'greater than' : 'at least'} ${String(issue.minimum)}`
            : `${issue.inclusive === false ? 'less than' : 'at most'} ${String(issue.maximum)}`;
        return [{ path, message: `expected ${bound}, got ${String(found)}` }];
      }
      if (!isCustom(issue.message) && issue.origin === 'string' && issue.code === 'too_small') {
        return [{ path, message: 'expected a non-empty string' }];
      }
      return [{ path, message: issue.message }];
    }
    case 'invalid_union': {
      if ('note' in issue && issue.note === 'No matching discriminator') {
        const options = (issue as { options?: unknown[] }).options ?? [];
        const typeValue = valueAt(input, path);
        const expected = `one of ${options.map((o) => quote(String(o))).join(', ')}`;
        const got = typeof typeValue === 'string' ? quote(typeValue) : describeValue(typeValue);
        return [
          {
            path,
            message:
              typeValue === undefined
                ? `required, expected ${expected}`
                : `expected ${expected}, got ${got}`,
          },
        ];
      }
      // A value that failed one branch only below its top level meant that branch: report its problems.
      const deep = issue.errors.filter(
        (branch) => branch.length > 0 && branch.every((i) => i.path.length > 0),
      );
      if (deep.length === 1)
        return deep[0]!.flatMap((inner) =>
          problemsOf({ ...inner, path: [...issue.path, ...inner.path] }, input),
        );
      return [{ path, message: unionMessage(issue, found) }];
    }
    default:
      return [{ path, message: issue.message }];
  }
}

function unionMessage(issue: z.core.$ZodIssueInvalidUnion, found: unknown): string {
  const alternatives: string[] = [];
  for (const branch of issue.errors) {
    const top = branch.find((i) => i.path.length === 0);
    if (top?.code === 'invalid_value')
      alternatives.push(...top.values.map((v) => quote(String(v))));
    else if (top?.code === 'invalid_type')
      alternatives.push(EXPECTED[top.expected] ?? top.expected);
  }
  if (alternatives.length === 0) return issue.message;
  return `expected ${alternatives.join(' or ')}, got ${describeValue(found)}`;
}

function unknownKey(key: string, known: string[]): string {
  const close = known.filter(
    (k) => distance(k.toLowerCase(), key.toLowerCase()) <= Math.max(1, Math.floor(k.length / 4)),
  );
  if (close.length > 0) return `unknown key; did you mean ${quote(close[0]!)}?`;
  return known.length > 0 ? `unknown key; expected one of: ${known.join(', ')}` : 'unknown key';
}

/** Levenshtein distance, for "did you mean". */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i += 1) {
    const current = [i];
    for (let j = 1; j <= b.length; j += 1) {
      current[j] = Math.min(
        previous[j]! + 1,
        current[j - 1]! + 1,
        previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** zod's own messages start with a capital; the schema's custom ones do not. */
function isCustom(message: string): boolean {
  return /^[a-z]/.test(message);
}

export function quote(value: string): string {
  const shown = value.length > 60 ? `${value.slice(0, 57)}...` : value;
  return `'${shown.replace(/\n/g, '\\n')}'`;
}

export function valueAt(root: unknown, path: readonly (string | number)[]): unknown {
  let node = root;
  for (const segment of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string | number, unknown>)[segment];
  }
  return node;
}
