/**
 * Bench fixtures under /work/main/.bench (gitignored): the 4 KiB read file and the nested list
 * trees (DIRS directories × FILES files of small content). Trees are reused when their file count
 * is already right, and rebuilt otherwise.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** A 4096-byte ASCII text file at BENCH/read/file-4k.txt; returns { dir, file }. */
export function readFixture(benchDir) {
  const dir = join(benchDir, 'read');
  const file = join(dir, 'file-4k.txt');
  mkdirSync(dir, { recursive: true });
  if (!existsSync(file) || statSync(file).size !== 4096) {
    const line =
      'The quick brown fox jumps over the lazy dog. 0123456789 abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKL\n'; // 96 chars
    let text = '';
    while (text.length < 4096) text += line;
    writeFileSync(file, text.slice(0, 4095) + '\n');
  }
  return { dir, file };
}

/** Counts regular files two levels deep (the shape this module builds). */
function countTree(root) {
  let count = 0;
  for (const d of readdirSync(root, { withFileTypes: true })) {
    if (!d.isDirectory()) return -1; // something else is in there: rebuild
    for (const f of readdirSync(join(root, d.name), { withFileTypes: true })) {
      if (!f.isFile()) return -1;
      count += 1;
    }
  }
  return count;
}

/** A tree of `dirs` × `perDir` small files at BENCH/tree-<total>; returns { root, count, reused }. */
export function listTree(benchDir, dirs, perDir) {
  const total = dirs * perDir;
  const root = join(benchDir, `tree-${total}`);
  if (existsSync(root)) {
    const count = countTree(root);
    if (count === total) return { root, count, reused: true };
    rmSync(root, { recursive: true, force: true });
  }
  mkdirSync(root, { recursive: true });
  const dw = String(dirs - 1).length;
  const fw = String(perDir - 1).length;
  for (let d = 0; d < dirs; d += 1) {
    const dirName = `d${String(d).padStart(dw, '0')}`;
    const dir = join(root, dirName);
    mkdirSync(dir);
    for (let f = 0; f < perDir; f += 1) {
      const name = `f${String(f).padStart(fw, '0')}.txt`;
      writeFileSync(join(dir, name), `${dirName}/${name}\n`);
    }
  }
  const count = countTree(root);
  if (count !== total)
    throw new Error(`built ${root} but counted ${count} files, expected ${total}`);
  return { root, count, reused: false };
}
