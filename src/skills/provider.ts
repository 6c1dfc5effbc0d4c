/**
 * A skills catalog mounted as a Reservoir provider at `skill://[prefix/]`: the registry routes,
 * judges access (`skill://…` rules, on the canonical URI) and subscribes to skill files like any
 * resource. Lists each skill's `SKILL.md` (as the SDK's extension does); reads every file of a
 * skill through the source, checked against the published size and digest; reads the folders
 * inside skills as directories.
 */
import { createHash } from 'node:crypto';
import { NotFoundError, UnavailableError } from '../core/errors.js';
import type { CallContext, DirectoryEntry, Provider, ResourceInfo } from '../core/types.js';
import type { SkillsCatalog } from './live-catalog.js';
import { readBytes } from './files.js';
import { pathKey } from './view.js';
import { definedProps } from '../core/defined.js';

export const PROVIDER_NAME = 'skills';

export interface SkillsProvider extends Provider {
  readonly catalog: SkillsCatalog;
}

export function skillsProvider(catalog: SkillsCatalog, source: Provider): SkillsProvider {
  const root = catalog.root;

  /** The URI as served for any spelling of it, or undefined. */
  const served = (uri: string): string | undefined => {
    const key = pathKey(root, uri);
    return key === undefined ? undefined : catalog.view.keys.get(key);
  };

  return {
    name: PROVIDER_NAME,
    root,
    catalog,

    async list(after, limit) {
      const skills = catalog.view.skills;
      let start = 0;
      if (after !== undefined)
        while (start < skills.length && skills[start]!.uri <= after) start += 1;
      const page = skills.slice(start, start + limit);
      const items = page.map((skill): ResourceInfo => {
        const manifest = catalog.view.files.get(skill.uri);
        return {
          uri: skill.uri,
          name: skill.frontmatter.name,
          description: skill.frontmatter.description,
          mimeType: 'text/markdown',
          ...definedProps({ size: manifest?.size }),
        };
      });
      return start + limit < skills.length
        ? { items, last: page[page.length - 1]!.uri }
        : { items };
    },

    isValidKey: (key) => key.startsWith(root),

    async read(uri, ctx) {
      const file = catalog.view.files.get(served(uri) ?? '');
      if (file === undefined) throw new NotFoundError(uri);
      const bytes = await readBytes(source, file.source, { signal: ctx.signal });
      const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
      if (bytes.byteLength !== file.size || digest !== file.digest) {
        void catalog.refresh();
        throw new UnavailableError(
          uri,
          'the file changed since the skills catalog listed it; the catalog is being rebuilt, list the skill again',
        );
      }
      const text = decodeUtf8(bytes);
      const mime = definedProps({ mimeType: file.mimeType });
      return {
        contents: [
          text === undefined
            ? { uri: file.uri, ...mime, blob: Buffer.from(bytes).toString('base64') }
            : { uri: file.uri, ...mime, text },
        ],
      };
    },

    canonical(uri) {
      const found = served(uri);
      if (found === undefined) throw new NotFoundError(uri);
      return found;
    },

    async readDirectory(uri, after, limit, ctx: CallContext) {
      const dir = served(uri);
      const children = dir === undefined ? undefined : catalog.view.dirs.get(dir);
      if (children === undefined) throw new NotFoundError(uri);
      const items: DirectoryEntry[] = [];
      for (const child of children) {
        if (after !== undefined && child.name <= after) continue;
        if (ctx.allows !== undefined && !ctx.allows('list', child.uri, child.kind === 'directory'))
          continue;
        if (items.length === limit) return { items, last: items[items.length - 1]!.name };
        items.push(child);
      }
      return { items };
    },

    watch(uri, onChange) {
      const file = served(uri);
      if (file === undefined || !catalog.view.files.has(file)) throw new NotFoundError(uri);
      return catalog.onFileChanged(file, onChange);
    },

    onListChanged(listener) {
      return catalog.onListChanged(listener);
    },

    onChanges(listener) {
      return catalog.onListChanged(() => listener([{ uri: root, container: true }]));
    },

    async close() {
      catalog.close();
      await source.close?.();
    },
  };
}

/** The text of `bytes` when they are valid UTF-8 (a BOM kept), else undefined: served as a blob. */
function decodeUtf8(bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}
