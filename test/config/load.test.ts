// Pins what a valid config file loads into: `${ENV}` interpolation (and its `$${` escape), roots
// and resource paths resolved against the config file's directory, JSON accepted like YAML, and
// `{{argument}}` substitution in compiled prompts.
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { interpolateEnv } from '../../src/config/interpolate.js';
import { ConfigFileError, loadConfig } from '../../src/config/load.js';
import type { ConfigProblem } from '../../src/config/messages.js';
import { compilePrompts, placeholders, resourceUri, substitute } from '../../src/config/prompts.js';
import type { Prompt } from '../../src/core/prompts.js';
import { Registry } from '../../src/core/registry.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';

let dir: string;

beforeAll(() => {
  dir = makeTempDir('reservoir-config-');
  mkdirSync(join(dir, 'project', 'docs'), { recursive: true });
  mkdirSync(join(dir, 'elsewhere'), { recursive: true });
  symlinkSync(join(dir, 'elsewhere'), join(dir, 'project', 'linked'));
});

afterAll(() => removeTree(dir));

function write(name: string, text: string): string {
  const path = join(dir, 'project', name);
  writeFileSync(path, text);
  return path;
}

describe('environment interpolation', () => {
  const env = { TOKEN: 's3cret', EMPTY: '', DIR: 'docs' };
  const run = (value: unknown): { value: unknown; problems: ConfigProblem[] } => {
    const problems: ConfigProblem[] = [];
    return { value: interpolateEnv(value, env, problems), problems };
  };

  it('replaces ${NAME} in every string value, nested in lists and objects', () => {
    expect(
      run({ a: 'Bearer ${TOKEN}', b: ['${DIR}/x', 3, true, null], c: { d: '${EMPTY}!' } }).value,
    ).toEqual({
      a: 'Bearer s3cret',
      b: ['docs/x', 3, true, null],
      c: { d: '!' },
    });
  });

  it('leaves keys alone and a lone $ alone', () => {
    expect(run({ '${TOKEN}': 'costs $5, ${TOKEN}$' }).value).toEqual({
      '${TOKEN}': 'costs $5, s3cret$',
    });
  });

  it('writes $${ as a literal ${', () => {
    expect(run('echo $${HOME} and ${TOKEN}').value).toBe('echo ${HOME} and s3cret');
  });

  it('names a variable named after an Object.prototype member as not set, from the process environment too', () => {
    const names = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__'];
    const value = Object.fromEntries(names.map((name) => [`k${name}`, `x \${${name}}`]));
    const expected = names.map((name) => ({
      path: [`k${name}`],
      message: `environment variable '${name}' is not set`,
    }));
    expect(run(value).problems).toEqual(expected);
    const problems: ConfigProblem[] = [];
    interpolateEnv(value, process.env, problems);
    expect(problems).toEqual(expected);
  });

  it('names a missing variable and the field', () => {
    expect(run({ server: { instructions: 'x ${NOPE} y' } }).problems).toEqual([
      { path: ['server', 'instructions'], message: "environment variable 'NOPE' is not set" },
    ]);
  });

  it('refuses a bad variable name', () => {
    expect(run(['${1X}']).problems).toEqual([
      {
        path: [0],
        message:
          "'${1X}' is not a valid environment variable name (write '$${' for a literal '${')",
      },
    ]);
  });

  it('interpolates a loaded file before validating it', () => {
    const file = write(
      'env.yaml',
      'sources:\n  - type: files\n    root: ${DIR}\nserver:\n  instructions: token ${TOKEN}\n',
    );
    const config = loadConfig(file, { env });
    expect(config.sources[0]!.root).toBe(join(dir, 'project', 'docs'));
    expect(config.server.instructions).toBe('token s3cret');
  });

  it('reports every missing variable of a file at once', () => {
    const file = write(
      'env2.yaml',
      'sources:\n  - type: files\n    root: ${A}\n  - type: files\n    root: ${B}\n',
    );
    expect(() => loadConfig(file, { env: {}, display: 'env2.yaml' })).toThrow(
      new ConfigFileError(file, [
        "env2.yaml:3:5: sources[0].root: environment variable 'A' is not set",
        "env2.yaml:5:5: sources[1].root: environment variable 'B' is not set",
      ]),
    );
  });
});

describe('path resolution', () => {
  it('resolves relative roots against the config file directory, not the working directory', () => {
    const file = write(
      'rel.yaml',
      'sources:\n  - type: files\n    root: ./docs\n  - type: files\n    root: ../elsewhere\n',
    );
    const config = loadConfig(file, { env: {} });
    expect(config.dir).toBe(join(dir, 'project'));
    expect(config.sources.map((s) => s.root)).toEqual([
      join(dir, 'project', 'docs'),
      join(dir, 'elsewhere'),
    ]);
  });

  it('keeps absolute roots and canonicalises symlinks (so overlap checks see through them)', () => {
    const file = write(
      'abs.yaml',
      `sources:\n  - type: files\n    root: ${join(dir, 'project', 'linked')}\n  - type: files\n    root: ../elsewhere\n`,
    );
    expect(() => loadConfig(file, { env: {}, display: 'abs.yaml' })).toThrow(
      `abs.yaml:5:5: sources[1].root: ${realpathSync(join(dir, 'elsewhere'))} is the same directory as sources[0].root (${join(dir, 'elsewhere')}); serve the outer one only`,
    );
  });

  it('resolves a scheme-less prompt resource against the config directory; URIs stay as written', () => {
    expect(resourceUri('docs/a b.md', join(dir, 'project'))).toBe(
      pathToFileURL(join(dir, 'project', 'docs', 'a b.md')).href,
    );
    expect(resourceUri('/etc/hosts', dir)).toBe('file:///etc/hosts');
    expect(resourceUri('file:///srv/x.md', dir)).toBe('file:///srv/x.md');
    expect(resourceUri('db://app/users', dir)).toBe('db://app/users');
  });
});

describe('JSON config files', () => {
  it('load like YAML, $schema included', () => {
    const file = write(
      'reservoir.json',
      JSON.stringify({
        $schema: '../schema/reservoir.schema.json',
        sources: [{ type: 'files', root: 'docs', watch: 'poll' }],
      }),
    );
    const config = loadConfig(file, { env: {} });
    expect(config.sources).toEqual([
      { type: 'files', root: join(dir, 'project', 'docs'), watch: 'poll', field: 'sources[0]' },
    ]);
    expect(config.prompts).toEqual([]);
    expect(config.server).toEqual({});
  });
});

describe('prompt templates', () => {
  it('substitutes {{arg}} (spaces allowed), empties absent ones, and keeps \\{{ literal', () => {
    expect(
      substitute('Review {{file}} for {{ focus }}{{missing}}; \\{{file}} stays', {
        file: 'a.md',
        focus: 'bugs',
      }),
    ).toBe('Review a.md for bugs; {{file}} stays');
    expect(placeholders('{{a}} \\{{b}} {{ c }}')).toEqual(['a', 'c']);
  });

  it('compile into core prompts whose messages embed resources by URI', async () => {
    const [prompt] = compilePrompts(
      [
        {
          name: 'review',
          title: 'Review',
          arguments: [
            { name: 'file', required: true, complete: ['README.md', 'readme.txt', 'src/'] },
          ],
          messages: [
            { role: 'user', text: 'Review {{file}}' },
            { role: 'user', resource: 'docs/{{file}}' },
          ],
        },
      ],
      { baseDir: '/srv/project', registry: new Registry() },
    );
    // Config prompts use nothing of the context but may be handed all of it.
    const ctx = { signal: new AbortController().signal } as Parameters<Prompt['messages']>[1];
    expect(await prompt!.messages({ file: 'x.md' }, ctx)).toEqual([
      { role: 'user', content: { type: 'text', text: 'Review x.md' } },
      { role: 'user', content: { type: 'resource_ref', uri: 'file:///srv/project/docs/x.md' } },
    ]);
    expect(prompt!.arguments?.[0]?.complete?.('read', {}, ctx)).toEqual({
      values: ['README.md', 'readme.txt'],
      total: 2,
      hasMore: false,
    });
  });
});
