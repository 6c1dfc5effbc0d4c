/**
 * Skill folders made at test time: a valid catalog with text, nested and binary files, written to
 * a plain folder or committed to a git repository, plus a config file pointing a server at them.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { commit, makeRepo } from '../providers/git-helpers.js';

export const PNG = Buffer.from([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0xfe, 0x80, 0x01,
]);

export function manifest(name: string, description: string, body = `# ${name}\n`): string {
  return `---\nname: ${name}\ndescription: ${description}\n---\n${body}`;
}

/** Two valid skills; every file is here, as bytes, keyed by its path under the skills folder. */
export function validSkills(): Record<string, Buffer> {
  return {
    'pdf-forms/SKILL.md': Buffer.from(
      manifest('pdf-forms', 'Fill in PDF forms.', 'Read references/GUIDE.md first.\n'),
    ),
    'pdf-forms/references/GUIDE.md': Buffer.from('# Guide\n\nÜnïcödé text, and a BOM-less line.\n'),
    'pdf-forms/scripts/fill.py': Buffer.from('print("fill")\n'),
    'pdf-forms/assets/logo.png': PNG,
    'commit-style/SKILL.md': Buffer.from(
      manifest('commit-style', 'Write commit messages the team way.'),
    ),
    'commit-style/EXAMPLES.md': Buffer.from('\ufeff# Examples with a byte order mark\n'),
  };
}

export function writeTree(root: string, files: Record<string, string | Buffer>): void {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), content);
  }
}

export function skillsFolder(files: Record<string, string | Buffer> = validSkills()): string {
  const root = mkdtempSync(join(tmpdir(), 'reservoir-skills-'));
  writeTree(root, files);
  return root;
}

/** A repository whose `skills/` folder holds the skills, on its default branch. */
export function skillsRepo(files: Record<string, string | Buffer> = validSkills()): string {
  const dir = makeRepo({ 'README.md': '# team\n' }, 'reservoir-skills-git-');
  commit(
    dir,
    Object.fromEntries(Object.entries(files).map(([path, content]) => [`skills/${path}`, content])),
    'skills',
  );
  return dir;
}

/** Writes a config file serving `skills` (and whatever `extra` adds, e.g. sources); returns its path. */
export function skillsConfig(skills: object[], extra: Record<string, unknown> = {}): string {
  const dir = mkdtempSync(join(tmpdir(), 'reservoir-skills-config-'));
  const config = { skills, ...extra };
  const path = join(dir, 'reservoir.json');
  writeFileSync(path, JSON.stringify(config));
  return path;
}
