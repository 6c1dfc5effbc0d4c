import Database from 'better-sqlite3';
import { readdirSync } from 'node:fs';
const dir = process.argv[2];
const file = dir + readdirSync(dir).find((f) => f.endsWith('.sqlite'));
const db = new Database(file, { readonly: true });
const st = db.prepare(`SELECT f.rowid AS id, f.rank AS score FROM fts f WHERE fts MATCH ? AND f.rank MATCH 'bm25(4.0, 2.0, 1.0)' ORDER BY f.rank, f.rowid LIMIT 21`);
for (const m of process.argv.slice(3)) {
  const t = [];
  for (let i = 0; i < 15; i++) { const s = performance.now(); st.all(m); t.push(performance.now() - s); }
  t.sort((a, b) => a - b);
  console.log(m, 'count', db.prepare('SELECT count(*) FROM fts WHERE fts MATCH ?').pluck().get(m), 'p50', t[7].toFixed(2), 'max', t[14].toFixed(2));
}
