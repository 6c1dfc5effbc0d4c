// Pins `reservoir serve --config FILE` end to end, with the real SDK client over a real stdio pipe
// in both eras: config prompts are listed; prompts/get substitutes arguments and embeds a served
// file; a missing required argument, a missing embedded file and one over the read cap give the
// errors users see; argument completion works; editing the file reloads prompts (one
// prompts/list_changed) and sources (resources/list_changed, also for changes inside a source the
// reload mounted); an invalid edit keeps the old config.
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, ProtocolError, ResourceNotFoundError } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_PATH, ensureBuilt } from '../helpers/build.js';
import { Cleanup, CLIENT_INFO, ERAS, MODERN_VERSION } from '../helpers/clients.js';
import { fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';
import { waitFor } from '../subscriptions/harness.js';

const CONFIG = `# yaml-language-server: $schema=../schema/reservoir.schema.json
sources:
  - type: files
    root: docs
    maxReadBytes: 1000
prompts:
  - name: review
    title: Review a file
    description: Ask for a review of one served file
    arguments:
      - name: file
        description: the file to review, relative to this config file
        required: true
        complete: path
      - name: focus
        complete: [security, performance, style]
    messages:
      - role: user
        text: "Review {{file}} with a focus on {{focus}}."
      - role: user
        resource: "{{file}}"
  - name: hello
    messages:
      - role: assistant
        text: Hello from the config
`;

const cleanup = new Cleanup();
afterAll(() => cleanup.run());
beforeAll(() => ensureBuilt());

/** Replaces the file the way editors save: write a temporary file, rename it over the old one. */
function saveLikeAnEditor(file: string, text: string): void {
  writeFileSync(`${file}.swp`, text);
  renameSync(`${file}.swp`, file);
}

describe.each(ERAS)('serve --config over stdio, %s era', (era) => {
  let dir: string;
  let file: string;
  let client: Client;
  let stderr = '';
  const promptChanges: string[][] = [];
  let resourceChanges = 0;

  beforeAll(async () => {
    dir = makeTempDir('reservoir-config-e2e-');
    cleanup.add(() => removeTree(dir));
    writeTree(dir, {
      'docs/a.md': '# A\n',
      'docs/big.txt': 'x'.repeat(2000),
      'other/b.md': '# B\n',
      'secret.txt': 'outside every root\n',
    });
    file = join(dir, 'reservoir.yaml');
    writeFileSync(file, CONFIG);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI_PATH, 'serve', '--config', file, '--log-level', 'info'],
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    client = new Client(CLIENT_INFO, {
      ...(era === '2026' ? { versionNegotiation: { mode: { pin: MODERN_VERSION } } } : {}),
      listChanged: {
        prompts: {
          debounceMs: 0,
          onChanged: (_error, prompts) =>
            void promptChanges.push((prompts ?? []).map((p) => p.name)),
        },
        resources: {
          debounceMs: 0,
          autoRefresh: false,
          onChanged: () => void (resourceChanges += 1),
        },
      },
    });
    cleanup.add(() => client.close());
    await client.connect(transport);
  });

  it('lists the config prompts with their arguments', async () => {
    const { prompts } = await client.listPrompts();
    // Every prompt carries Reservoir's prompt icons (test/explorer/mcp-app.test.ts checks their form).
    for (const prompt of prompts)
      expect(prompt.icons?.map((i) => i.theme)).toEqual(['light', 'dark']);
    expect(prompts.map(({ icons: _icons, ...rest }) => rest)).toEqual([
      { name: 'hello' },
      {
        name: 'review',
        title: 'Review a file',
        description: 'Ask for a review of one served file',
        arguments: [
          {
            name: 'file',
            description: 'the file to review, relative to this config file',
            required: true,
          },
          { name: 'focus' },
        ],
      },
    ]);
  });

  it('substitutes arguments and embeds the resource the prompt names', async () => {
    const result = await client.getPrompt({
      name: 'review',
      arguments: { file: 'docs/a.md', focus: 'security' },
    });
    expect(result.description).toBe('Ask for a review of one served file');
    expect(result.messages).toEqual([
      {
        role: 'user',
        content: { type: 'text', text: 'Review docs/a.md with a focus on security.' },
      },
      {
        role: 'user',
        content: {
          type: 'resource',
          resource: { uri: fileUri(dir, 'docs/a.md'), mimeType: 'text/markdown', text: '# A\n' },
        },
      },
    ]);
  });

  it('answers a missing required argument with -32602 naming it', async () => {
    const error: unknown = await client
      .getPrompt({ name: 'review', arguments: { focus: 'style' } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error).toMatchObject({
      code: -32602,
      message: expect.stringContaining("Invalid argument 'file': required by prompt 'review'"),
    });
  });

  it('answers an embedded file that is missing, or outside every root, as resource-not-found', async () => {
    for (const path of ['docs/nope.md', 'secret.txt', 'docs/../secret.txt']) {
      const error: unknown = await client
        .getPrompt({ name: 'review', arguments: { file: path } })
        .catch((e: unknown) => e);
      // On the wire: -32002 (2025) or -32602 (2026) with data { uri }; the SDK client raises both as ResourceNotFoundError.
      expect(error, path).toBeInstanceOf(ResourceNotFoundError);
      expect(error, path).toMatchObject({
        message: expect.stringContaining('Resource not found: file://'),
        data: { uri: expect.stringMatching(/^file:\/\//) },
      });
    }
  });

  it('answers an embedded file over the read cap with -32010 carrying its size and the limit', async () => {
    const error: unknown = await client
      .getPrompt({ name: 'review', arguments: { file: 'docs/big.txt' } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error).toMatchObject({
      code: -32010,
      data: { uri: fileUri(dir, 'docs/big.txt'), size: 2000, limit: 1000, code: 'too_large' },
    });
  });

  it('completes fixed values by prefix and paths of served files', async () => {
    const ref = { type: 'ref/prompt' as const, name: 'review' };
    const focus = await client.complete({ ref, argument: { name: 'focus', value: 'S' } });
    expect(focus.completion).toMatchObject({
      values: ['security', 'style'],
      total: 2,
      hasMore: false,
    });
    const path = async (value: string): Promise<unknown> =>
      (await client.complete({ ref, argument: { name: 'file', value } })).completion;
    expect(await path('d')).toMatchObject({ values: ['docs/'], total: 1, hasMore: false });
    expect(await path('docs/')).toMatchObject({
      values: ['docs/a.md', 'docs/big.txt'],
      total: 2,
      hasMore: false,
    });
    expect(await path('docs/b')).toMatchObject({
      values: ['docs/big.txt'],
      total: 1,
      hasMore: false,
    });
    expect(await path('docs/../')).toMatchObject({ values: [], total: 0 });
    expect(await path('secret')).toMatchObject({ values: [], total: 0 });
  });

  it('reloads prompts when the file is edited, with one prompts/list_changed', async () => {
    promptChanges.length = 0;
    saveLikeAnEditor(file, CONFIG.replace('name: hello', 'name: greet'));
    await waitFor(() => promptChanges.length >= 1, 'prompts/list_changed after an edit');
    expect(promptChanges[0]).toEqual(['greet', 'review']);
    const result = await client.getPrompt({ name: 'greet' });
    expect(result.messages).toEqual([
      { role: 'assistant', content: { type: 'text', text: 'Hello from the config' } },
    ]);
    // One notification for the edit: a later edit (and one back) are heard right after it, nothing between.
    saveLikeAnEditor(file, CONFIG.replace('name: hello', 'name: greeting'));
    await waitFor(() => promptChanges.length >= 2, 'prompts/list_changed after a second edit');
    saveLikeAnEditor(file, CONFIG.replace('name: hello', 'name: greet'));
    await waitFor(() => promptChanges.length >= 3, 'prompts/list_changed after the edit back');
    expect(promptChanges).toEqual([
      ['greet', 'review'],
      ['greeting', 'review'],
      ['greet', 'review'],
    ]);
  });

  it('keeps serving the old config after an invalid edit, and logs why', async () => {
    promptChanges.length = 0;
    saveLikeAnEditor(file, CONFIG.replace('name: hello', 'name: review'));
    await waitFor(
      () => stderr.includes('config reload rejected'),
      'the rejected reload in the log',
    );
    expect(stderr).toContain(
      "prompts[1].name: duplicate prompt name 'review' (also prompts[0].name)",
    );
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(['greet', 'review']);
    expect(promptChanges).toHaveLength(0);
  });

  it('mounts an added source and tells resource list listeners', async () => {
    resourceChanges = 0;
    saveLikeAnEditor(
      file,
      CONFIG.replace('name: hello', 'name: greet').replace(
        'prompts:',
        '  - type: files\n    root: other\nprompts:',
      ),
    );
    await waitFor(() => resourceChanges >= 1, 'resources/list_changed after a source was added');
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri).sort()).toEqual([
      fileUri(dir, 'docs/a.md'),
      fileUri(dir, 'docs/big.txt'),
      fileUri(dir, 'other/b.md'),
    ]);
    expect(promptChanges).toHaveLength(0);
  });

  it('unmounts a removed source', async () => {
    resourceChanges = 0;
    saveLikeAnEditor(
      file,
      CONFIG.replace('name: hello', 'name: greet').replace('root: docs', 'root: other'),
    );
    await waitFor(() => resourceChanges >= 1, 'resources/list_changed after a source was replaced');
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual([fileUri(dir, 'other/b.md')]);
  });

  it('hears list changes from a source a reload mounted', async () => {
    resourceChanges = 0;
    writeFileSync(join(dir, 'other', 'c.md'), '# C\n');
    await waitFor(
      () => resourceChanges >= 1,
      'resources/list_changed for a file added under a reloaded source',
    );
  });

  // The built CLI is a bundle: a native package bundled into it (rather than loaded from
  // node_modules) fails at run time, and the server would quietly fall back to polling.
  it('heard those changes through the native watcher, never the polling fallback', () => {
    expect(stderr).not.toContain('native file watching is unavailable');
  });
});
