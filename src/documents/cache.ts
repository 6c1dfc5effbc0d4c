/**
 * The rendition cache: renditions kept by the SHA-256 of the document's bytes (and the part asked
 * for), in memory (recently used, bounded in characters) and on disk under the state directory
 * (`renditions/`, bounded in bytes, least recently used evicted), so a restart does not convert
 * again. Identical bytes under many URIs (copies, git revisions) share one entry. A damaged file is
 * treated as a miss and replaced.
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { LRUCache } from 'lru-cache';
import type { DocumentKind, DocumentParts, Rendition } from './types.js';

/** Bumped when renderers change what they produce, so old renditions are not served. */
export const RENDITION_VERSION = 1;

export interface RenditionCacheOptions {
  /** The folder for cached renditions; without it, memory only. */
  dir?: string | undefined;
  /** Most bytes kept on disk. @default 256 MiB */
  maxDiskBytes?: number | undefined;
  /** Most characters kept in memory. @default 32 Mi */
  maxMemoryChars?: number | undefined;
}

/** The content hash of a document's bytes (hex SHA-256). */
export function contentHash(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * The content hash of a resource's contents as a source answered them: of the bytes a blob's base64
 * decodes to, or of a text's UTF-8 (equal to contentHash of those bytes). A contents object seen
 * before (a source's own cache answers the same frozen object) is not hashed again.
 */
export function contentsHash(content: { text: string } | { blob: string }): string {
  let hash = hashed.get(content);
  if (hash === undefined) {
    const digest = createHash('sha256');
    if ('blob' in content) digest.update(content.blob, 'base64');
    else digest.update(content.text, 'utf8');
    hash = digest.digest('hex');
    hashed.set(content, hash);
  }
  return hash;
}
const hashed = new WeakMap<object, string>();

/** The cache key of one rendition: content, kind, part, renderer version. */
export function renditionKey(hash: string, kind: DocumentKind, parts: DocumentParts): string {
  const part = [
    parts.pages === undefined ? '' : `p${parts.pages.start}-${parts.pages.end ?? ''}`,
    parts.slides === undefined ? '' : `s${parts.slides.start}-${parts.slides.end ?? ''}`,
    parts.sheet === undefined ? '' : `h${parts.sheet}`,
    parts.range === undefined ? '' : `r${parts.range}`,
    parts.outline === true ? 'o' : '',
  ].join('|');
  return createHash('sha256')
    .update(`${RENDITION_VERSION}\0${hash}\0${kind}\0${part}`)
    .digest('hex');
}

export class RenditionCache {
  private readonly memory: LRUCache<string, Rendition>;
  private readonly dir: string | undefined;
  private readonly maxDiskBytes: number;
  /** Files on disk (key → bytes), oldest use first; loaded on first use. */
  private disk: Map<string, number> | undefined;
  private diskBytes = 0;

  constructor(options: RenditionCacheOptions = {}) {
    this.dir = options.dir;
    this.maxDiskBytes = options.maxDiskBytes ?? 256 * 1024 * 1024;
    this.memory = new LRUCache<string, Rendition>({
      maxSize: Math.max(1, options.maxMemoryChars ?? 32 * 1024 * 1024),
      sizeCalculation: (r) => Math.max(1, r.markdown.length),
    });
  }

  get(key: string): Rendition | undefined {
    const held = this.memory.get(key);
    if (held !== undefined) return held;
    const disk = this.index();
    if (this.dir === undefined || disk === undefined || !disk.has(key)) return undefined;
    const file = join(this.dir, `${key}.json`);
    try {
      const rendition = JSON.parse(readFileSync(file, 'utf8')) as Rendition;
      if (typeof rendition.markdown !== 'string') throw new Error('not a rendition');
      // Most recently used: last in the map, and a fresh mtime for the next process's order.
      const size = disk.get(key)!;
      disk.delete(key);
      disk.set(key, size);
      const now = new Date();
      utimesSync(file, now, now);
      this.memory.set(key, rendition);
      return rendition;
    } catch {
      this.forget(key);
      return undefined;
    }
  }

  set(key: string, rendition: Rendition): void {
    this.memory.set(key, rendition);
    const disk = this.index();
    if (this.dir === undefined || disk === undefined) return;
    const text = JSON.stringify(rendition);
    const size = Buffer.byteLength(text);
    if (size > this.maxDiskBytes) return;
    try {
      const temporary = join(this.dir, `.${key}.${randomBytes(4).toString('hex')}.tmp`);
      writeFileSync(temporary, text, { mode: 0o600 });
      renameSync(temporary, join(this.dir, `${key}.json`));
    } catch {
      return; // A cache that cannot write only costs a conversion next time.
    }
    if (disk.has(key)) this.diskBytes -= disk.get(key)!;
    disk.delete(key);
    disk.set(key, size);
    this.diskBytes += size;
    for (const [old] of disk) {
      if (this.diskBytes <= this.maxDiskBytes) break;
      this.forget(old);
    }
  }

  /** Bytes the disk cache holds. */
  get bytesOnDisk(): number {
    this.index();
    return this.diskBytes;
  }

  private forget(key: string): void {
    const disk = this.disk;
    if (disk?.has(key) === true) {
      this.diskBytes -= disk.get(key)!;
      disk.delete(key);
    }
    this.memory.delete(key);
    if (this.dir !== undefined) rmSync(join(this.dir, `${key}.json`), { force: true });
  }

  /** The disk index, built from the folder (oldest use first) the first time it is needed. */
  private index(): Map<string, number> | undefined {
    if (this.dir === undefined) return undefined;
    if (this.disk !== undefined) return this.disk;
    const found: { key: string; size: number; used: number }[] = [];
    try {
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      for (const name of readdirSync(this.dir)) {
        if (!/^[0-9a-f]{64}\.json$/.test(name)) continue;
        const stat = statSync(join(this.dir, name));
        found.push({ key: name.slice(0, 64), size: stat.size, used: stat.mtimeMs });
      }
    } catch {
      // Unreadable folder: run as a memory-only cache.
    }
    found.sort((a, b) => a.used - b.used);
    this.disk = new Map(found.map((f) => [f.key, f.size]));
    this.diskBytes = found.reduce((sum, f) => sum + f.size, 0);
    return this.disk;
  }
}
