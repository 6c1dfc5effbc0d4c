// `Accept` is read as HTTP defines it: wildcards, parameters, q-values (q=0 refuses), the most
// specific range deciding, and no header meaning anything.
import { describe, expect, it } from 'vitest';
import { acceptance } from '../../src/http/accept.js';

describe('acceptance', () => {
  it.each([
    [null, { json: true, sse: true }],
    ['', { json: true, sse: true }],
    ['*/*', { json: true, sse: true }],
    ['application/json, text/event-stream', { json: true, sse: true }],
    ['application/*, text/*', { json: true, sse: true }],
    ['application/*', { json: true, sse: false }],
    ['application/json', { json: true, sse: false }],
    ['text/event-stream', { json: false, sse: true }],
    ['text/html', { json: false, sse: false }],
    ['APPLICATION/JSON ; charset=utf-8 , Text/Event-Stream', { json: true, sse: true }],
    ['*/*;q=0.1', { json: true, sse: true }],
    ['application/json;q=0, */*', { json: false, sse: true }],
    ['*/*;q=0, text/event-stream', { json: false, sse: true }],
    ['text/*;q=0, text/event-stream;q=0.5, application/json', { json: true, sse: true }],
    ['text/event-stream;q=0, text/*', { json: false, sse: false }],
    ['application/json;q=banana, text/event-stream', { json: true, sse: true }],
    ['nonsense, /, application/, */*', { json: true, sse: true }],
  ])('reads %j as %j', (header, expected) => {
    expect(acceptance(header)).toEqual(expected);
  });
});
