// Every config example in the docs goes through the real validator, read from the docs when the test
// runs (so examples added later are checked too): each ```yaml / ```json block of README.md and
// docs/**/*.md, and deploy/*.yaml (but the Docker Compose file). A block is a config example when its
// top-level keys are config keys (the config schema's own: `sources`, `server`, `skills`, …); a lone source (has `type`), a list of sources,
// or a lone prompt is checked inside a minimal config. Directories that exist only on the writer's
// machine (`root: /srv/docs`) are the one problem forgiven; `${VAR}` placeholders get values. A block
// that is not a config at all (an MCP host's JSON, an HTTP answer) is marked by a
// `<!-- not a config -->` line just above it.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parse } from 'yaml';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigFileError, parseConfig } from '../../src/config/load.js';
import { ConfigSchema } from '../../src/config/schema.js';
import { REPO_ROOT } from '../helpers/build.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';

const CONFIG_KEYS = new Set(Object.keys(ConfigSchema.shape));
const MARK = '<!-- not a config -->';

interface Example {
  where: string;
  language: 'yaml' | 'json';
  text: string;
}

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? markdownFiles(join(dir, entry.name))
      : entry.name.endsWith('.md')
        ? [join(dir, entry.name)]
        : [],
  );
}

function examples(): Example[] {
  const found: Example[] = [];
  for (const file of [join(REPO_ROOT, 'README.md'), ...markdownFiles(join(REPO_ROOT, 'docs'))]) {
    const lines = readFileSync(file, 'utf8').split('\n');
    for (let i = 0; i < lines.length; i += 1) {
      const open = /^\s*```(yaml|yml|json)\s*$/.exec(lines[i]!);
      if (open === null) continue;
      const end = lines.findIndex((line, j) => j > i && /^\s*```\s*$/.test(line));
      const marked = lines[i - 1]?.trim() === MARK;
      const indent = /^\s*/.exec(lines[i]!)![0].length;
      if (!marked) {
        found.push({
          where: `${relative(REPO_ROOT, file)}:${i + 1}`,
          language: open[1] === 'json' ? 'json' : 'yaml',
          text: lines
            .slice(i + 1, end)
            .map((line) => line.slice(indent))
            .join('\n'),
        });
      }
      i = end;
    }
  }
  for (const name of readdirSync(join(REPO_ROOT, 'deploy')).filter(
    (n) => /\.(ya?ml|json)$/.test(n) && !/compose/.test(n),
  )) {
    found.push({
      where: `deploy/${name}`,
      language: name.endsWith('.json') ? 'json' : 'yaml',
      text: readFileSync(join(REPO_ROOT, 'deploy', name), 'utf8'),
    });
  }
  return found;
}

/** The example as a whole config, or undefined when it is not a config example. */
function asConfig(value: unknown): Record<string, unknown> | undefined {
  const isObject = (v: unknown): v is Record<string, unknown> =>
    v !== null && typeof v === 'object' && !Array.isArray(v);
  if (
    Array.isArray(value) &&
    value.every((item) => isObject(item) && typeof item['type'] === 'string')
  )
    return { sources: value };
  if (!isObject(value)) return undefined;
  if (typeof value['type'] === 'string') return { sources: [value] };
  if (typeof value['name'] === 'string' && Array.isArray(value['messages']))
    return { sources: [{ type: 'files', root: dir }], prompts: [value] };
  const keys = Object.keys(value);
  if (keys.length === 0 || !keys.every((key) => CONFIG_KEYS.has(key))) return undefined;
  return { sources: [{ type: 'files', root: dir }], ...value };
}

const all = examples();
const dir = makeTempDir('reservoir-docs-');
afterAll(() => removeTree(dir));

describe('config examples in the docs', () => {
  it('finds the examples of README.md, docs/ and deploy/, and would catch a wrong one', () => {
    expect(all.length).toBeGreaterThanOrEqual(9);
    expect(all.some((example) => example.where.startsWith('docs/config.md'))).toBe(true);
    const wrong = asConfig(parse('server:\n  http: { port: seven }\n'));
    expect(() => parseConfig(JSON.stringify(wrong), { file: join(dir, 'reservoir.json') })).toThrow(
      'server.http.port: expected a whole number',
    );
  });

  it.each(all.map((example) => [example.where, example] as const))(
    '%s is a config the validator accepts (or is marked as not one)',
    (where, example) => {
      const value: unknown =
        example.language === 'json' ? JSON.parse(example.text) : parse(example.text);
      const config = asConfig(value);
      expect(
        config,
        `${where}: not recognisable as a config; mark it with ${MARK} if it is not one`,
      ).toBeDefined();
      const env = Object.fromEntries(
        [...example.text.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => [
          m[1]!,
          placeholder(m[1]!),
        ]),
      );
      try {
        parseConfig(JSON.stringify(config), {
          file: join(dir, 'reservoir.json'),
          display: where,
          env,
        });
      } catch (error) {
        if (!(error instanceof ConfigFileError)) throw error;
        // A root that exists only on the writer's machine is fine; anything else is a wrong example.
        const problems = error.problems.filter((p) => !/\.root: .* does not exist$/.test(p));
        expect(problems).toEqual([]);
      }
    },
  );
});

/** A value that fits where the docs use a variable. */
function placeholder(name: string): string {
  if (/URL/.test(name)) return 'postgres://reader@db.example.com/app';
  if (/SHA256|DIGEST/.test(name)) return 'a'.repeat(64);
  return 'value';
}
