/**
 * The `skills:` section and `--skills DIR`, resolved: relative roots and repository paths against
 * the config file's directory (or the working directory for the command line).
 */
import { resolve } from 'node:path';
import type { SkillsConfig } from './schema.js';

export interface SkillsSettings extends SkillsConfig {
  /** Where it was declared, for messages and logs: `skills[0]` or `--skills DIR`. */
  origin: string;
}

/** The config file's entries with their sources' paths made absolute. */
export function resolveSkills(entries: readonly SkillsConfig[], dir: string): SkillsSettings[] {
  return entries.map((entry, index) => ({
    ...entry,
    source:
      entry.source.type === 'files'
        ? { ...entry.source, root: resolve(dir, entry.source.root) }
        : entry.source.type === 'git'
          ? { ...entry.source, path: resolve(dir, entry.source.path) }
          : entry.source,
    origin: `skills[${index}]`,
  }));
}

/** `--skills DIR`: a folder of skill folders, served with the defaults. */
export function skillsFromCommandLine(dirs: readonly string[], cwd: string): SkillsSettings[] {
  return dirs.map((dir) => ({ source: { type: 'files', root: resolve(cwd, dir) }, origin: `--skills ${dir}` }));
}
