/**
 * `reservoir skills lint [DIR]` and the skills part of `reservoir check`: build each catalog once,
 * the way `serve` would, and print every problem a publisher can act on — the skill (folder or
 * file) and the rule it breaks. Lint exits 1 when anything fails; check fails on problems only
 * where the catalog is strict (where serving would refuse them).
 */
import type { Command } from 'commander';
import type { LoadedConfig } from '../config/load.js';
import { skillsFromCommandLine, type SkillsSettings } from '../config/skills.js';
import { withConfigFlags, configFrom, type ConfigFlags } from './options.js';

interface LintOutcome {
  lines: string[];
  skills: number;
  problems: number;
}

/** Builds each catalog (never strict: every problem is collected) and describes what it found. */
async function lint(entries: readonly SkillsSettings[], hide: string[] = []): Promise<LintOutcome> {
  const { buildSkillsProvider, describeWarning } = await import('../server/skills.js');
  const outcome: LintOutcome = { lines: [], skills: 0, problems: 0 };
  for (const entry of entries) {
    try {
      const provider = await buildSkillsProvider({ ...entry, strict: false }, { hide });
      const warnings = provider.catalog.warnings;
      outcome.skills += provider.catalog.view.skills.length;
      outcome.problems += warnings.length;
      for (const warning of warnings) outcome.lines.push(describeWarning(entry.origin, warning));
      await provider.close?.();
    } catch (error) {
      outcome.problems += 1;
      outcome.lines.push(
        `${entry.origin}: cannot be read: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
  return outcome;
}

export function registerSkillsCommands(
  program: Command,
  write: (text: string) => Promise<void>,
): void {
  const skills = program
    .command('skills')
    .description('Agent Skills: check the catalogs the server would publish');
  withConfigFlags(
    skills
      .command('lint')
      .description(
        "validate a folder of Agent Skills (default: the config file's skills catalogs, else .): every problem, and exit code 1 when any",
      )
      .argument('[dir]', 'a folder of skill folders, each with a SKILL.md'),
  ).action(async (dir: string | undefined, flags: ConfigFlags) => {
    const config = dir === undefined ? await configFrom(flags) : undefined;
    const entries =
      dir !== undefined || config === undefined || config.skills.length === 0
        ? skillsFromCommandLine([dir ?? '.'], process.cwd())
        : config.skills;
    const outcome = await lint(entries, config === undefined ? [] : [config.file]);
    for (const line of outcome.lines) await write(`${line}\n`);
    const count = (n: number, what: string): string => `${n} ${what}${n === 1 ? '' : 's'}`;
    await write(`${count(outcome.skills, 'skill')} valid, ${count(outcome.problems, 'problem')}\n`);
    if (outcome.problems > 0) process.exitCode = 1;
  });
}

/** The skills lines of `reservoir check`: warnings, or errors (exit 1) for strict catalogs. */
export async function checkSkills(
  config: LoadedConfig,
): Promise<{ lines: string[]; failed: boolean }> {
  const lines: string[] = [];
  let failed = false;
  for (const entry of config.skills) {
    const outcome = await lint([entry], [config.file]);
    const severity = entry.strict === true ? 'error' : 'warning';
    if (entry.strict === true && outcome.problems > 0) failed = true;
    for (const line of outcome.lines) lines.push(`${severity}: ${line}`);
  }
  return { lines, failed };
}
