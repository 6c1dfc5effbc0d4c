/**
 * `${NAME}` in any string value of the config file is replaced by the environment variable NAME
 * (for secrets: keep them out of the file). `$${` writes a literal `${`. A variable that is not
 * set is an error naming it and the field; so is a `${` without its `}` or with a bad name.
 * Keys are never interpolated; neither are non-string values.
 */
import type { ConfigProblem } from './messages.js';
import { ownMember } from '../core/defined.js';

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A copy of `value` with every string interpolated; problems are appended to `problems`. */
export function interpolateEnv(
  value: unknown,
  env: Readonly<Record<string, string | undefined>>,
  problems: ConfigProblem[],
  path: (string | number)[] = [],
): unknown {
  if (typeof value === 'string') return interpolateString(value, env, problems, path);
  if (Array.isArray(value))
    return value.map((item, i) => interpolateEnv(item, env, problems, [...path, i]));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    // Defined, never assigned: a `__proto__` key (refused before this runs) must not become the prototype.
    for (const [key, item] of Object.entries(value)) {
      Object.defineProperty(out, key, {
        value: interpolateEnv(item, env, problems, [...path, key]),
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return out;
  }
  return value;
}

function interpolateString(
  text: string,
  env: Readonly<Record<string, string | undefined>>,
  problems: ConfigProblem[],
  path: (string | number)[],
): string {
  if (!text.includes('${')) return text;
  let out = '';
  let i = 0;
  while (i < text.length) {
    const at = text.indexOf('$', i);
    if (at < 0) {
      out += text.slice(i);
      break;
    }
    out += text.slice(i, at);
    if (text.startsWith('$${', at)) {
      out += '${';
      i = at + 3;
      continue;
    }
    if (!text.startsWith('${', at)) {
      out += '$';
      i = at + 1;
      continue;
    }
    const close = text.indexOf('}', at + 2);
    if (close < 0) {
      problems.push({
        path,
        message: "'${' without a closing '}' (write '$${' for a literal '${')",
      });
      return text;
    }
    const name = text.slice(at + 2, close);
    if (!NAME.test(name)) {
      problems.push({
        path,
        message: `'\${${name}}' is not a valid environment variable name (write '$\${' for a literal '\${')`,
      });
      return text;
    }
    // Set means set: `${toString}` is a variable like any other, not Object.prototype's member.
    const found = ownMember(env, name);
    if (found === undefined) {
      problems.push({ path, message: `environment variable '${name}' is not set` });
      return text;
    }
    out += found;
    i = close + 1;
  }
  return out;
}
