// A name or a type is data: the document kinds must not answer for Object.prototype's members. A
// binary file called `x.__proto__` was once taken for a document, and reading it ended the server
// (`x.constructor` answered an internal error); a source's Content-Type `constructor` did the same.
import { zipSync, type Zippable } from 'fflate';
import { describe, expect, it } from 'vitest';
import { documentKind } from '../../src/documents/kinds.js';
import { repack } from '../../src/documents/repack.js';
import { ZipArchive } from '../../src/documents/zip.js';
import { ensureBuilt } from '../helpers/build.js';
import { Cleanup, connectStdio, ERAS } from '../helpers/clients.js';
import { fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';

const PROTOTYPE_NAMES = [
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'isPrototypeOf',
];
const BYTES = Buffer.from([0, 1, 2, 0xff, 0xfe, 0]);

describe('zip entries named after Object.prototype members', () => {
  it('are repacked under their own names, and one called __proto__ is left out, not turned into others', () => {
    const names = [...PROTOTYPE_NAMES.filter((n) => n !== '__proto__'), 'word/document.xml'];
    // fflate cannot write an entry called __proto__ either: it is written as `_________`
    // (as long) and renamed in the archive's bytes, local header and central directory alike.
    const input: Zippable = {};
    for (const name of [...names, '_________'])
      input[name] = [new TextEncoder().encode(`<x>${name}</x>`), { level: 6 }];
    const zipped = Buffer.from(zipSync(input, {}));
    const renamed = Buffer.from(
      zipped.toString('latin1').replaceAll('_________', '__proto__'),
      'latin1',
    );
    const archive = new ZipArchive(renamed, 1 << 20);
    expect(archive.names()).toContain('__proto__');
    const repacked = new ZipArchive(repack(archive), 1 << 20);
    expect(repacked.names().sort()).toEqual([...names].sort());
    expect(new TextDecoder().decode(repacked.read('constructor'))).toBe('<x>constructor</x>');
  });
});

describe('document kinds for names and types named after Object.prototype members', () => {
  it('are no document kind, by extension nor by type', () => {
    for (const name of PROTOTYPE_NAMES) {
      expect(documentKind(undefined, `file:///d/x.${name}`), name).toBeUndefined();
      expect(documentKind('application/octet-stream', `file:///d/x.${name}`), name).toBeUndefined();
      expect(documentKind('application/zip', `file:///d/x.${name}`), name).toBeUndefined();
      expect(documentKind(name, 'file:///d/x.bin'), name).toBeUndefined();
    }
    expect(documentKind(undefined, 'file:///d/x.pdf')).toBe('pdf');
  });

  it.each(ERAS)(
    'binary files so named read as their bytes and the server keeps answering over stdio, %s era',
    async (era) => {
      const cleanup = new Cleanup();
      try {
        await ensureBuilt();
        const root = makeTempDir();
        cleanup.add(() => removeTree(root));
        writeTree(root, Object.fromEntries(PROTOTYPE_NAMES.map((name) => [`x.${name}`, BYTES])));
        const { client } = await connectStdio(era, [root], [], cleanup);
        for (const name of PROTOTYPE_NAMES) {
          const read = await client.readResource({ uri: fileUri(root, `x.${name}`) });
          expect(read.contents, name).toEqual([
            {
              uri: fileUri(root, `x.${name}`),
              mimeType: 'application/octet-stream',
              blob: BYTES.toString('base64'),
            },
          ]);
        }
        const listed = await client.listResources();
        expect(listed.resources).toHaveLength(PROTOTYPE_NAMES.length);
      } finally {
        await cleanup.run();
      }
    },
  );
});
