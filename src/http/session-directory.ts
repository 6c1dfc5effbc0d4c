/**
 * What 2025-era sessions need from a cluster (cluster/sessions.ts implements it over Redis): a
 * record of each session that any member can rebuild the session from, and word of sessions that
 * changed or ended elsewhere. Types only, so the HTTP endpoint loads nothing of the cluster.
 */

/** Everything a member needs to rebuild a session another member opened. */
export interface SessionRecord {
  /** Who opened it (`kind:id`): the session is no credential for anyone else. */
  owner: string;
  /** What it counts against (the principal, or an anonymous caller's address). */
  quota: string;
  /** The `initialize` params the client sent (protocol version, capabilities, client info). */
  init: Record<string, unknown>;
  /** The resources it is subscribed to (canonical URIs), sorted. */
  subscriptions: string[];
  /**
   * How many times its subscriptions were edited (absent: never). A member applies a record to its
   * copy of the session only when it is newer than the one the copy holds.
   */
  version?: number;
}

/** Subscriptions a request added to a session and removed from it (canonical URIs). */
export interface SubscriptionEdit {
  add: string[];
  remove: string[];
}

export interface SessionDirectory {
  /** Records a new session (before its id reaches the client). */
  created(id: string, record: SessionRecord): Promise<void>;
  /** The record of a session, or undefined when there is none (ended, expired, never was). */
  find(id: string): Promise<SessionRecord | undefined>;
  /** The session was used: its idle expiry starts again, and it becomes its quota key's most recently used. */
  touch(id: string, quota: string): void;
  /**
   * Its subscriptions changed here: applies `edit` to the record as it stands (members editing one
   * session at once lose none of each other's edits) and tells the other members, so the one holding
   * its GET stream follows. With `followMs`, when a GET stream of the session is open on some member,
   * waits (at most that long) until that member says it follows. The record as edited, or undefined
   * when there is none (ended, expired).
   */
  changed(
    id: string,
    edit: SubscriptionEdit,
    followMs?: number,
  ): Promise<SessionRecord | undefined>;
  /** This member holds a GET stream of the session and follows its record up to `version`. */
  synced(id: string, version: number): void;
  /** It ended (DELETE, or closed over its principal's cap): everywhere. */
  ended(id: string): Promise<void>;
  /**
   * Word from other members: a session's record changed (`sync`, with the edit count it reached
   * when the sender knows it) or it ended (`end`).
   */
  listen(handler: (id: string, action: 'sync' | 'end', version?: number) => void): () => void;
  /** Sessions a quota key holds across the cluster. */
  count(quota: string): Promise<number>;
  /**
   * A GET stream of the session is open on this member until `until` (epoch ms; the member renews
   * it while the stream lasts), or no longer (`undefined`). A streaming session is in use: no
   * member closes it to make room under its principal's cap.
   */
  streaming(id: string, quota: string, until: number | undefined): void;
  /** The quota key's least recently used session across the cluster that streams nowhere. */
  oldest(quota: string): Promise<string | undefined>;
}
