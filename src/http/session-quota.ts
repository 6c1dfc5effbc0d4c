/**
 * What one principal may take of the 2025-era session pool: how fast it may open sessions
 * (`initialize` is rate-limited, a fixed window per principal) and how many it may hold. Anonymous
 * callers all share one principal, so they are told apart by their address here: one anonymous
 * client cannot spend the budget of every other.
 *
 * Over its cap, a principal's least recently used idle session (no GET stream open) is closed to
 * make room (see LegacySessions): the principal can only ever push out its own sessions, a client
 * that forgot to DELETE its sessions keeps working, and a client whose session was closed is
 * answered 404, on which the protocol has it start a new session. A session with an open stream is
 * in use and is never closed for this; when every session is in use, the new one is refused.
 */
import type { AuthInfo } from '@modelcontextprotocol/server';
import { isReservoirError } from '../core/errors.js';
import type { Principal } from '../core/principal.js';
import { principalOfAuth } from '../mcp/guarded-call.js';
import { parseOptions } from '../policy/options.js';
import { createRateLimiter, type RateLimiter, type RateLimitStore } from '../policy/rate-limit.js';
import { sessionLimitOptions, type SessionLimitOptions } from './session-options.js';

export class SessionQuota {
  readonly perPrincipal: number;
  private readonly rate: RateLimiter;
  private readonly burst: number;
  private readonly perSecond: number;

  constructor(options: SessionLimitOptions = {}, store?: RateLimitStore) {
    const parsed = parseOptions(sessionLimitOptions, options, 'http.sessions');
    this.perPrincipal = parsed.perPrincipal;
    this.perSecond = parsed.initialize.perSecond;
    this.burst = parsed.initialize.burst ?? Math.ceil(this.perSecond);
    this.rate = createRateLimiter(
      { requests: { perSecond: this.perSecond, burst: this.burst } },
      store,
    );
  }

  /** Spends one `initialize` of the caller's budget; resolves with the refusal to send when it is spent. */
  async admit(key: string, id: unknown): Promise<Response | undefined> {
    const budget: Principal = { kind: 'token', id: key, scopes: [] };
    try {
      await this.rate.take(budget);
      return undefined;
    } catch (error) {
      if (!isReservoirError(error) || error.code !== 'limit_exceeded') throw error;
      const retryAfterMs = Number(error.data['retryAfterMs']);
      return refusal(
        429,
        id,
        `Too many sessions opened: at most ${this.burst} initialize requests per principal within ${formatSeconds(this.burst / this.perSecond)} (${this.perSecond} per second); retry in ${formatSeconds(retryAfterMs / 1000)}`,
        {
          code: 'limit_exceeded',
          kind: 'initialize',
          limit: this.perSecond,
          burst: this.burst,
          retryAfterMs,
        },
        { 'retry-after': String(Math.ceil(retryAfterMs / 1000)) },
      );
    }
  }

  /** The answer when none of the principal's sessions may be closed: each is streaming or still being opened. */
  full(id: unknown, active: number): Response {
    return refusal(
      429,
      id,
      `Too many sessions: at most ${this.perPrincipal} per principal, and each is in use (a GET stream open, or still opening); end one with DELETE, or retry later`,
      { code: 'limit_exceeded', kind: 'sessions_per_principal', limit: this.perPrincipal, active },
    );
  }
}

/** Whose budget and cap a request counts against: the principal, or an anonymous caller's address. */
export function quotaKey(authInfo: AuthInfo, address: string | undefined): string {
  const principal = principalOfAuth(authInfo);
  if (principal === undefined || principal.kind === 'anonymous')
    return `anonymous@${address ?? 'unknown'}`;
  return `${principal.kind}:${principal.id}`;
}

/** The id of the `initialize` in a body (a message or a batch), for the refusal to answer. */
export function initializeId(body: unknown): unknown {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  const initialize = messages.find(
    (m) => (m as { method?: unknown } | null)?.method === 'initialize',
  ) as { id?: unknown } | undefined;
  return initialize?.id ?? null;
}

function refusal(
  status: number,
  id: unknown,
  message: string,
  data: Record<string, unknown>,
  headers: Record<string, string> = {},
): Response {
  return new Response(
    JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32013, message, data } }),
    {
      status,
      headers: { 'content-type': 'application/json', ...headers },
    },
  );
}

function formatSeconds(seconds: number): string {
  return seconds < 1
    ? `${Math.max(1, Math.round(seconds * 1000))} ms`
    : `${Number(seconds.toFixed(1))} s`;
}
