/**
 * Hands a zip-based document to a library that inflates archives itself (mammoth and exceljs use
 * JSZip, which has no size cap): the entries are inflated here under the cap (zip.ts), their XML
 * checked for entity declarations, and stored again uncompressed, so the library only copies bytes
 * already counted.
 */
import { zipSync, type Zippable } from 'fflate';
import { refuseEntities } from './xml.js';
import type { ZipArchive } from './zip.js';

/** A stored (uncompressed) copy of the entries of `archive` that `keep` accepts. */
export function repack(
  archive: ZipArchive,
  keep: (name: string) => boolean = () => true,
): Uint8Array {
  const files: Zippable = {};
  for (const name of archive.names()) {
    // An entry called `__proto__` (a name no document format uses) would set the prototype of the
    // entries object instead of adding one — here and inside fflate, which cannot zip it — and
    // leave junk entries in its place: it is left out.
    if (name.endsWith('/') || name === '__proto__' || !keep(name)) continue;
    const bytes = archive.read(name)!;
    if (/\.(xml|rels)$/i.test(name)) refuseEntities(new TextDecoder().decode(bytes), name);
    files[name] = [bytes, { level: 0 }];
  }
  return zipSync(files, { level: 0 });
}
