// Issue 24, item 2: `reservoir check` names each file Reservoir keeps that lies under a served root —
// which file, where it is (through a symlinked spelling too) and which source serves it — on stderr,
// and still exits 0 with its summary (the server hides them; the warning says to move them).
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, runCli } from '../helpers/build.js';
import { makeCertificate } from '../helpers/certificate.js';
import { makeTempDir, removeTree, writeTree } from '../helpers/tree.js';

let dir: string;

beforeAll(async () => {
  await ensureBuilt();
  dir = makeTempDir('reservoir-check-reserved-');
  writeTree(dir, {
    'site/docs/a.md': '# a\n',
    'elsewhere/b.md': 'b\n',
  });
  // A real pair: check reads them as serve would.
  mkdirSync(join(dir, 'site', 'tls'));
  await makeCertificate(join(dir, 'site', 'tls'), 'site');
  mkdirSync(join(dir, 'site', 'state'));
  // The state dir is named through a symlink outside the root that leads into it.
  symlinkSync(join(dir, 'site', 'state'), join(dir, 'state-link'));
  writeFileSync(
    join(dir, 'site', 'reservoir.yaml'),
    [
      'sources:',
      '  - { type: files, root: . }',
      'server:',
      '  stateDir: ../state-link',
      '  http: { tls: { cert: tls/site.crt, key: tls/site.key } }',
      '  audit: { sink: file, path: logs/audit.log, keep: 1 }',
    ].join('\n'),
  );
  writeFileSync(
    join(dir, 'outside.yaml'),
    ['sources:', '  - { type: files, root: elsewhere }', 'server:', '  stateDir: state-out'].join(
      '\n',
    ),
  );
});

afterAll(() => removeTree(dir));

describe('reservoir check', () => {
  it('warns, naming the file and the root, for each kept file under a served root, and still exits 0', async () => {
    const site = join(dir, 'site');
    const run = await runCli(['check'], site);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe(
      'reservoir.yaml: valid (1 source, 0 prompts; serves https://127.0.0.1:7337/mcp)\n',
    );
    const lines = run.stderr.trimEnd().split('\n');
    const root = `sources[0].root (${site})`;
    expect(lines).toEqual([
      `warning: the state directory ${join(dir, 'state-link')} → ${join(site, 'state')} lies under ${root}; Reservoir never serves it, but keep it outside served roots`,
      `warning: the config file ${join(site, 'reservoir.yaml')} lies under ${root}; Reservoir never serves it, but keep it outside served roots`,
      `warning: the TLS key ${join(site, 'tls', 'site.key')} lies under ${root}; Reservoir never serves it, but keep it outside served roots`,
      `warning: the TLS certificate ${join(site, 'tls', 'site.crt')} lies under ${root}; Reservoir never serves it, but keep it outside served roots`,
      `warning: the audit log ${join(site, 'logs', 'audit.log')} lies under ${root}; Reservoir never serves it, but keep it outside served roots`,
      `warning: the audit log ${join(site, 'logs', 'audit.log.1')} lies under ${root}; Reservoir never serves it, but keep it outside served roots`,
    ]);
  });

  it('warns about nothing when everything kept lies outside the served roots', async () => {
    const run = await runCli(['check', '--config', 'outside.yaml'], dir);
    expect(run).toEqual({
      code: 0,
      stdout: 'outside.yaml: valid (1 source, 0 prompts; serves stdio)\n',
      stderr: '',
    });
  });
});
