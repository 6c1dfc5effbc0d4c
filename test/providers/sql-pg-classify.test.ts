// How a PostgreSQL failure is classified (no database needed): a lost connection — a terminated
// backend (57P01/57P02), a reset or broken socket (ECONNRESET, EPIPE), pg's "Connection
// terminated" — is unavailable and says so; an errno code that looks like a SQLSTATE (EPIPE, EBUSY:
// five capitals) is never read as one, so a broken pipe is never an invalid statement.
import { describe, expect, it } from 'vitest';
import { classify } from '../../src/providers/sql/postgres-classify.js';

const errno = (code: string, syscall = 'write'): Error =>
  Object.assign(new Error(`${syscall} ${code}`), { code, errno: -32, syscall });
const server = (code: string, message: string): Error =>
  Object.assign(new Error(message), { code, severity: 'FATAL' });

describe('classify (PostgreSQL)', () => {
  it.each([
    [
      'a terminated backend (57P01)',
      server('57P01', 'terminating connection due to administrator command'),
    ],
    [
      'a crash shutdown (57P02)',
      server('57P02', 'terminating connection because of crash of another server process'),
    ],
    ['a broken pipe', errno('EPIPE')],
    ['a reset socket', errno('ECONNRESET', 'read')],
    ['an unexpected end', new Error('Connection terminated unexpectedly')],
    [
      'a client used after its connection failed',
      new Error('Client has encountered a connection error and is not queryable'),
    ],
  ])('answers %s as a lost connection, unavailable', (_what, error) => {
    const failure = classify(error);
    expect(failure.kind).toBe('unavailable');
    expect(failure.message).toMatch(/^the connection to the database was lost \(.+\); try again$/);
  });

  it('answers a server that does not accept connections yet (57P03) as unavailable', () => {
    expect(classify(server('57P03', 'the database system is starting up'))).toMatchObject({
      kind: 'unavailable',
      message: expect.stringMatching(/does not accept connections now/),
    });
  });

  it('never reads an errno code as a SQLSTATE', () => {
    for (const code of ['EPIPE', 'EBUSY', 'EINTR', 'ENXIO', 'EBADF'])
      expect(classify(errno(code)).kind, code).toBe('unavailable');
  });

  it('still classifies statements by SQLSTATE', () => {
    expect(classify(server('57014', 'canceling statement due to statement timeout')).kind).toBe(
      'timeout',
    );
    expect(classify(server('42P01', 'relation "x" does not exist')).kind).toBe('missing');
    expect(classify(server('22P02', 'invalid input syntax for type integer')).kind).toBe('invalid');
    expect(classify(server('25006', 'cannot execute INSERT in a read-only transaction')).kind).toBe(
      'refused',
    );
  });
});
