// Pins `reservoir completion bash|zsh|fish`: each script parses in its shell (`bash -n`, and
// `zsh -n` / `fish -n` where installed), and the bash one completes for real — commands, flags,
// the values of flags with fixed choices, setup's hosts — because it is generated from the command
// definitions. An unknown shell is refused with the choices.
import { execFile, spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_PATH, ensureBuilt } from '../helpers/build.js';
import { makeTempDir, removeTree } from '../helpers/tree.js';

const run = promisify(execFile);
let dir: string;
const scripts: Record<string, string> = {};

beforeAll(async () => {
  await ensureBuilt();
  dir = makeTempDir();
  for (const shell of ['bash', 'zsh', 'fish']) {
    const { stdout } = await run(process.execPath, [CLI_PATH, 'completion', shell]);
    scripts[shell] = join(dir, `reservoir.${shell}`);
    writeFileSync(scripts[shell]!, stdout);
  }
});
afterAll(() => removeTree(dir));

/** What the bash completion offers for the words typed so far (the last one being completed). */
function complete(...words: string[]): string[] {
  const array = words.map((w) => `'${w}'`).join(' ');
  const script = `source '${scripts['bash']}'; COMP_WORDS=(${array}); COMP_CWORD=${words.length - 1}; _reservoir; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const result = spawnSync('bash', ['-c', script], { encoding: 'utf8', cwd: dir });
  expect(result.stderr).toBe('');
  return result.stdout.split('\n').filter(Boolean);
}

describe('reservoir completion', () => {
  // bash is required; zsh and fish are checked where installed (the run's summary lists the skip).
  const installed = (shell: string): boolean => spawnSync(shell, ['-c', 'exit 0']).status === 0;
  for (const shell of ['bash', 'zsh', 'fish']) {
    it.skipIf(shell !== 'bash' && !installed(shell))(
      `prints a ${shell} script its shell parses`,
      () => {
        const check = spawnSync(shell, ['-n', scripts[shell]!], { encoding: 'utf8' });
        expect(check.error).toBeUndefined();
        expect(check.stderr).toBe('');
        expect(check.status).toBe(0);
      },
    );
  }

  it('completes commands, flags, fixed flag values and setup hosts in bash', () => {
    // Every command the program registers is offered, the search and skills commands included.
    expect([...complete('reservoir', 'se')].sort()).toEqual(['search', 'serve', 'setup']);
    expect(complete('reservoir', 'sk')).toEqual(['skills']);
    expect(complete('reservoir', 'serve', '--no-s')).toEqual(['--no-search']);
    expect(complete('reservoir', 'serve', '--log-f')).toEqual(['--log-format']);
    expect(complete('reservoir', 'serve', '--log-level', 'de')).toEqual(['debug']);
    expect(complete('reservoir', 'serve', '--watch', '')).toEqual(['native', 'poll']);
    expect(complete('reservoir', 'setup', '')).toEqual([
      'claude',
      'claude-code',
      'vscode',
      'cursor',
      'gemini',
      'codex',
    ]);
    expect(complete('reservoir', 'completion', 'f')).toEqual(['fish']);
    expect(complete('reservoir', 'list', '--js')).toEqual(['--json']);
  });

  it('completes directories for serve roots in bash', () => {
    spawnSync('mkdir', ['-p', join(dir, 'docs-a'), join(dir, 'docs-b')]);
    expect(complete('reservoir', 'serve', 'docs-').sort()).toEqual(['docs-a', 'docs-b']);
  });

  it('refuses an unknown shell, naming the choices', async () => {
    const failed = await run(process.execPath, [CLI_PATH, 'completion', 'tcsh']).catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(failed).toMatchObject({ code: 1 });
    expect((failed as { stderr: string }).stderr).toContain(
      "argument value 'tcsh' is invalid for argument 'shell'. Allowed choices are bash, zsh, fish.",
    );
  });
});
