/** Deterministic word lists for the search benches' generated trees. */

/** Pseudo-words from syllables, deterministic for a given `random`. */
export function words(random, count) {
  const syllables =
    'ka lo mi ne ru ta shi po ven dor gal tin mar sel quo bri zan fel hul ost'.split(' ');
  const out = new Set();
  while (out.size < count) {
    const n = 2 + Math.floor(random() * 3);
    let w = '';
    for (let i = 0; i < n; i += 1) w += syllables[Math.floor(random() * syllables.length)];
    out.add(w);
  }
  return [...out];
}

/** A seeded pseudo-random number generator (mulberry32): numbers in [0, 1). */
export function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
