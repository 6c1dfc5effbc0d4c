/**
 * The `skills:` section and `--skills DIR`, resolved: relative roots and repository paths against
 * the config file's directory (or the working directory for the command line).
 */
import { resolve } from 'node:path';
import { catalogRow } from '../providers/catalog.js';
import type { SkillsConfig } from './schema.js';

export interface SkillsSettings extends SkillsConfig {
  /** Where it was declared, for messages and logs: `skills[0]` or `--skills DIR`. */
  origin: string;
}

/** The config file's entries with their sources' paths (the fields their catalog rows mark) made absolute. */
export function resolveSkills(entries: readonly SkillsConfig[], dir: string): SkillsSettings[] {
  return entries.map((entry, index) => {
    const source: Record<string, unknown> = { ...entry.source };
    for (const field of catalogRow(entry.source.type).pathFields)
      if (typeof source[field] === 'string') source[field] = resolve(dir, source[field]);
    return { ...entry, source: source as SkillsConfig['source'], origin: `skills[${index}]` };
  });
}

/** `--skills DIR`: a folder of skill folders, served with the defaults. */
export function skillsFromCommandLine(dirs: readonly string[], cwd: string): SkillsSettings[] {
  return dirs.map((dir) => ({
    source: { type: 'files', root: resolve(cwd, dir) },
    origin: `--skills ${dir}`,
  }));
}
