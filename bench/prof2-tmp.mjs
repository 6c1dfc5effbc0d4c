import { Registry } from '../dist/core/registry.js';
import { filesProvider } from '../dist/providers/files/index.js';
import { SearchService } from '../dist/search/service.js';
import { silentLogger } from '../dist/core/log.js';
const registry = new Registry().mount(filesProvider({ root: '/work/wt/search/.bench/search-tree-100000' }));
const service = new SearchService(registry, { stateDir: '/work/wt/search/.bench/search-state' }, silentLogger);
await service.ready;
const ctx = () => ({ signal: new AbortController().signal });
for (const q of ['budget', 'retry budget', '"retry budget"', 'configur*', '订阅']) {
  const t = [];
  for (let i = 0; i < 100; i++) { const s = performance.now(); await service.search({ query: q, limit: 20 }, ctx()); t.push(performance.now() - s); }
  t.sort((a, b) => a - b);
  console.log(q, 'p50', t[50].toFixed(2), 'p99', t[98].toFixed(2));
}
if (process.argv[2] === 'cpu') {
  const { Session } = await import('node:inspector/promises');
  const session = new Session(); session.connect();
  await session.post('Profiler.enable'); await session.post('Profiler.start');
  for (let i = 0; i < 200; i++) for (const q of (process.argv[3] ?? 'retry budget|configur*|订阅').split('|')) await service.search({ query: q, limit: 20 }, ctx());
  const { profile } = await session.post('Profiler.stop');
  const self = new Map();
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const dt = profile.timeDeltas; const samples = profile.samples;
  for (let i = 0; i < samples.length; i++) { const n = byId.get(samples[i]); const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').slice(-2).join('/')}:${n.callFrame.lineNumber}`; self.set(k, (self.get(k) ?? 0) + dt[i]); }
  console.log([...self].sort((a, b) => b[1] - a[1]).slice(0, 25).map(([k, v]) => `${(v / 1000).toFixed(0)}ms ${k}`).join('\n'));
}
await service.close(); await registry.close();
