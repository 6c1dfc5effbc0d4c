/**
 * What cluster members put in Redis for each other — bus messages, session records, source
 * leases — is sealed with the shared secret, so a client of the Redis that is not a member (or a
 * member of another service sharing it) can neither forge nor move one: HMAC-SHA256 over a tag
 * naming where the text belongs (the bus channel, the session's key, the lease's key), an expiry,
 * and the payload's JSON exactly as stored. What does not verify — no seal, a wrong one, another
 * tag, past its expiry, over its size bound — is dropped by the reader.
 *
 * Stored form: `<signature>.<expiry>.<payload JSON>`; the signature is base64url, the expiry epoch
 * milliseconds (0: none — the record's own Redis expiry bounds it). The key is derived from the
 * secret for this use alone, so a seal is never a valid cursor or request-state signature.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

/** What the key is derived for (a seal made for another purpose never verifies here). */
const KEY_PURPOSE = 'reservoir/cluster-seal/v1';
/** Bytes of a base64url HMAC-SHA256. */
const SIGNATURE_CHARS = 43;

export type Unsealed =
  | { ok: true; payload: unknown; expiry: number }
  | { ok: false; reason: 'unsealed' | 'forged' | 'expired' | 'too_large' | 'malformed' };

export class Seal {
  private readonly key: Buffer;

  constructor(secret: string | Uint8Array) {
    this.key = createHmac('sha256', Buffer.from(secret)).update(KEY_PURPOSE).digest();
  }

  /** `payload` sealed for `tag`, valid until `expiry` (epoch ms; 0: no expiry of its own). */
  seal(tag: string, payload: unknown, expiry = 0): string {
    const json = JSON.stringify(payload);
    const at = String(Math.max(0, Math.floor(expiry)));
    return `${this.sign(tag, at, json)}.${at}.${json}`;
  }

  /** The payload of `text` when it was sealed for `tag` with this secret, is unexpired and at most `maxChars` long. */
  open(tag: string, text: string, maxChars = Number.POSITIVE_INFINITY, now = Date.now()): Unsealed {
    if (text.length > maxChars) return { ok: false, reason: 'too_large' };
    const first = text.indexOf('.');
    const second = first < 0 ? -1 : text.indexOf('.', first + 1);
    if (first !== SIGNATURE_CHARS || second < 0) return { ok: false, reason: 'unsealed' };
    const signature = Buffer.from(text.slice(0, first), 'utf8');
    const at = text.slice(first + 1, second);
    const json = text.slice(second + 1);
    if (!/^\d{1,16}$/.test(at)) return { ok: false, reason: 'unsealed' };
    const expected = Buffer.from(this.sign(tag, at, json), 'utf8');
    if (signature.length !== expected.length || !timingSafeEqual(signature, expected))
      return { ok: false, reason: 'forged' };
    const expiry = Number(at);
    if (expiry !== 0 && expiry < now) return { ok: false, reason: 'expired' };
    try {
      return { ok: true, payload: JSON.parse(json) as unknown, expiry };
    } catch {
      return { ok: false, reason: 'malformed' };
    }
  }

  private sign(tag: string, at: string, json: string): string {
    // The tag's length first, so no tag and payload pair can be read as another.
    return createHmac('sha256', this.key)
      .update(`${tag.length}:${tag}\n${at}\n`)
      .update(json)
      .digest('base64url');
  }
}

/**
 * Counts what a reader dropped and says so in the log at most once per `intervalMs`, with how many
 * and why, so a flood of forged messages costs one line a minute.
 */
export class DropCounter {
  total = 0;
  private sinceLog = 0;
  private reasons = new Map<string, number>();
  private lastLog = 0;

  constructor(
    private readonly what: string,
    private readonly log: (fields: Record<string, unknown>, message: string) => void,
    private readonly intervalMs = 60_000,
  ) {}

  dropped(reason: string): void {
    this.total += 1;
    this.sinceLog += 1;
    this.reasons.set(reason, (this.reasons.get(reason) ?? 0) + 1);
    const now = Date.now();
    if (now - this.lastLog < this.intervalMs) return;
    this.log(
      { dropped: this.sinceLog, reasons: Object.fromEntries(this.reasons) },
      `dropped ${this.what} that did not verify with the shared secret (a Redis client that is not a member, or a member with another secret)`,
    );
    this.lastLog = now;
    this.sinceLog = 0;
    this.reasons = new Map();
  }
}
