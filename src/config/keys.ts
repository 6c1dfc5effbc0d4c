/**
 * Keys a config file may never use: `__proto__`, `constructor` and `prototype` name parts of the
 * JavaScript object model rather than settings, and copying one into an object (as reading the file
 * does) can change what every other setting of that object reads as. They are refused wherever they
 * appear — top level, sources, server options, maps of user-chosen names such as named queries —
 * in YAML and JSON alike, before anything else reads the file.
 */
import type { ConfigProblem } from './messages.js';

export const FORBIDDEN_KEYS: ReadonlySet<string> = new Set([
  '__proto__',
  'constructor',
  'prototype',
]);

/** One problem per forbidden key anywhere in `value` (parsed YAML or JSON: plain objects and arrays). */
export function forbiddenKeyProblems(
  value: unknown,
  path: (string | number)[] = [],
  problems: ConfigProblem[] = [],
): ConfigProblem[] {
  if (Array.isArray(value)) {
    value.forEach((item, index) => forbiddenKeyProblems(item, [...path, index], problems));
  } else if (value !== null && typeof value === 'object') {
    // Own keys only: both parsers create `__proto__` as an own property, never as the prototype.
    for (const key of Object.keys(value)) {
      if (FORBIDDEN_KEYS.has(key)) {
        problems.push({
          path: [...path, key],
          message: `'${key}' is not allowed as a key: it could change how the rest of the file is read; rename or remove it`,
        });
      } else {
        forbiddenKeyProblems((value as Record<string, unknown>)[key], [...path, key], problems);
      }
    }
  }
  return problems;
}
