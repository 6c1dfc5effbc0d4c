// Pins the contract suite itself: an in-memory provider that keeps the contract passes all of it,
// including with short pages (fewer items than asked for while more remain).
import { memoryProvider } from '../core/fakes.js';
import { testProvider } from './contract.js';

const names = ['a', 'a-c', 'a/b', 'b', 'c d', 'zz', 'é', '日本'];

testProvider({
  name: 'memory',
  setup: async () => ({
    provider: memoryProvider({ root: 'mem://one/', names }),
    knownUris: names.map((n) => `mem://one/${n}`),
    missingUri: 'mem://one/missing',
    cleanup: () => undefined,
  }),
});

testProvider({
  name: 'memory with short pages',
  setup: async () => ({
    provider: memoryProvider({ root: 'mem://short/', names, maxPage: 2 }),
    knownUris: names.map((n) => `mem://short/${n}`),
    missingUri: 'mem://short/missing',
    cleanup: () => undefined,
  }),
});
