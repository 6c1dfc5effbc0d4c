/**
 * The catalog's view is patched part by part on an edit; it must equal the view built from
 * scratch over the same parts (order, files, directories, keys), whatever is edited, added or
 * removed, including folder names that sort around each other ('a', 'a-b', 'a b', 'é').
 */
import type { Skill } from '@modelcontextprotocol/server/ext/skills';
import { describe, expect, it } from 'vitest';
import type { SourceEntry } from '../../src/skills/files.js';
import { buildView, EMPTY_VIEW, patchView, type SkillsView } from '../../src/skills/view.js';

interface Part {
  skills: Skill[];
  seen: Map<string, SourceEntry>;
}

const ROOT = 'skill://';

/** A part (one top-level folder) holding a skill at its root and one nested skill, each with a reference file. */
function part(folder: string, version: number): Part {
  const seen = new Map<string, SourceEntry>();
  const skills: Skill[] = [];
  for (const sub of ['', 'nested/']) {
    const dir = `${folder}/${sub}`;
    const encoded = dir.split('/').map(encodeURIComponent).join('/');
    const manifest = {
      uri: `${ROOT}${encoded}SKILL.md`,
      digest: `sha256:${folder}${sub}${version}`,
      size: 10 + version,
    };
    const reference = {
      uri: `${ROOT}${encoded}references/GUIDE.md`,
      digest: `sha256:g${version}`,
      size: 5,
    };
    seen.set(`${dir}SKILL.md`, { uri: `file:///src/${dir}SKILL.md`, mimeType: 'text/markdown' });
    seen.set(`${dir}references/GUIDE.md`, { uri: `file:///src/${dir}references/GUIDE.md` });
    skills.push({
      uri: manifest.uri,
      frontmatter: { name: folder, description: `v${version}` },
      resources: [manifest, reference],
    });
  }
  return { skills, seen };
}

function plain(view: SkillsView): unknown {
  const sorted = <T>(map: ReadonlyMap<string, T>): [string, T][] =>
    [...map].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    skills: view.skills.map((s) => s.uri),
    byUri: sorted(view.byUri),
    files: sorted(view.files),
    dirs: sorted(view.dirs),
    keys: sorted(view.keys),
  };
}

describe('skills view patching', () => {
  it('patching parts in, out and edited gives exactly the view built from scratch', () => {
    const folders = ['a', 'a-b', 'a b', 'ab', 'é', 'z', 'a.b', 'b'];
    let parts = new Map<string, { part: Part; view: SkillsView }>();
    let view = EMPTY_VIEW;
    // A fixed pseudo-random walk of edits, additions and removals.
    let seed = 7;
    const next = (n: number): number => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
    for (let step = 0; step < 300; step += 1) {
      const folder = folders[next(folders.length)]!;
      const old = parts.get(folder);
      const nextParts = new Map(parts);
      if (old !== undefined && next(3) === 0) nextParts.delete(folder);
      else {
        const fresh = part(folder, step);
        nextParts.set(folder, { part: fresh, view: buildView(ROOT, [fresh]) });
      }
      const now = nextParts.get(folder);
      const before = view;
      view = patchView(
        view,
        old === undefined ? [] : [old.view],
        now === undefined ? [] : [now.view],
      );
      parts = nextParts;
      expect(plain(view)).toEqual(
        plain(
          buildView(
            ROOT,
            [...parts.values()].map((p) => p.part),
          ),
        ),
      );
      // The view a reader held is left as it was.
      expect(before).not.toBe(view);
    }
  });

  it('many parts patched in at once (the first build) are in URI order', () => {
    const folders = Array.from({ length: 200 }, (_, i) => `skill-${(i * 7919) % 1000}`);
    const view = patchView(
      EMPTY_VIEW,
      [],
      folders.map((folder) => buildView(ROOT, [part(folder, 1)])),
    );
    expect(plain(view)).toEqual(
      plain(
        buildView(
          ROOT,
          folders.map((folder) => part(folder, 1)),
        ),
      ),
    );
  });
});
