// Pins rememberRecent: a repeated key is answered without calling the function again, at most
// `entries` keys are kept (the oldest goes first), long keys and throwing calls are never kept.
import { describe, expect, it } from 'vitest';
import { rememberRecent } from '../../src/core/memo.js';

function counted(fail = (_key: string): boolean => false): {
  fn: (key: string) => string;
  calls: string[];
} {
  const calls: string[] = [];
  return {
    calls,
    fn: (key: string) => {
      calls.push(key);
      if (fail(key)) throw new Error(`no ${key}`);
      return key.toUpperCase();
    },
  };
}

describe('rememberRecent', () => {
  it('answers a repeated key from memory', () => {
    const { fn, calls } = counted();
    const remembered = rememberRecent(fn);
    expect([remembered('a'), remembered('a'), remembered('b'), remembered('a')]).toEqual([
      'A',
      'A',
      'B',
      'A',
    ]);
    expect(calls).toEqual(['a', 'b']);
  });

  it('keeps at most `entries` keys, forgetting the oldest first', () => {
    const { fn, calls } = counted();
    const remembered = rememberRecent(fn, { entries: 2 });
    remembered('a');
    remembered('b');
    remembered('c'); // forgets a
    remembered('b');
    remembered('a');
    expect(calls).toEqual(['a', 'b', 'c', 'a']);
  });

  it('never keeps a key longer than maxKeyLength', () => {
    const { fn, calls } = counted();
    const remembered = rememberRecent(fn, { maxKeyLength: 3 });
    remembered('long');
    remembered('long');
    remembered('ok');
    remembered('ok');
    expect(calls).toEqual(['long', 'long', 'ok']);
  });

  it('remembers undefined results, but never a call that threw', () => {
    const calls: string[] = [];
    const remembered = rememberRecent((key: string) => {
      calls.push(key);
      if (key === 'bad') throw new Error('bad key');
      return undefined;
    });
    expect(remembered('none')).toBeUndefined();
    expect(remembered('none')).toBeUndefined();
    expect(() => remembered('bad')).toThrow('bad key');
    expect(() => remembered('bad')).toThrow('bad key');
    expect(calls).toEqual(['none', 'bad', 'bad']);
  });
});
