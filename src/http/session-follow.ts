/**
 * Cluster mode: how a member keeps its copy of a 2025-era session in step with the session's record
 * in Redis. A POST that subscribes or unsubscribes edits the record (the directory merges the edit
 * into the record as it stands, so members editing one session at once lose nothing) and, when the
 * session's GET stream is open on another member, is answered once that member follows; a member
 * told the record changed reads and applies it. All of it runs in the session's `serial`, so no
 * change is made on top of a copy that another is halfway through updating, and a record is applied
 * only when newer than the one the copy holds.
 */
import type { Logger } from '../core/log.js';
import type { Session } from './session-build.js';
import type { SessionDirectory, SessionRecord } from './session-directory.js';

/**
 * How long a POST that subscribed or unsubscribed waits, at most, for the member holding the
 * session's GET stream to follow before it is answered. Past it the answer goes out anyway (that
 * member is slow, cut off from Redis, or died with its stream still marked open).
 */
export const FOLLOW_WAIT_MS = 3_000;

/**
 * Records what a POST changed (`before`: the subscriptions it started from) as an edit of the
 * session's record, and applies the record as edited, which holds what other members changed
 * meanwhile too.
 */
export async function recordEdit(
  directory: SessionDirectory,
  logger: Logger,
  id: string,
  session: Session,
  before: string[],
): Promise<void> {
  const now = session.subscriptions();
  const had = new Set(before);
  const has = new Set(now);
  const edit = {
    add: now.filter((uri) => !had.has(uri)),
    remove: before.filter((uri) => !has.has(uri)),
  };
  if (session.record === undefined || (edit.add.length === 0 && edit.remove.length === 0)) return;
  // A stream elsewhere follows before the client is answered: a change made after the answer would
  // otherwise reach a stream still on the subscriptions before it.
  const followMs = session.streams === 0 ? FOLLOW_WAIT_MS : undefined;
  const record = await directory
    .changed(id, edit, followMs)
    .catch((error: unknown) =>
      logger.debug({ err: error }, "could not record a session's subscriptions"),
    );
  if (record !== undefined) await applyRecord(session, record);
}

/** Makes `session` follow `record`, unless its copy holds a newer one. */
export async function applyRecord(session: Session, record: SessionRecord): Promise<void> {
  if ((record.version ?? 0) < (session.record?.version ?? 0)) return;
  session.record = { ...record, subscriptions: [...record.subscriptions].sort() };
  await session.sync(record.subscriptions);
}

/**
 * Another member edited the record (to `version`, when it said): reads and applies it — unless this
 * copy already follows that edit or a later one; a member holding the session's GET stream then
 * says it follows (the editor's answer waits for that).
 */
export async function followRecord(
  directory: SessionDirectory,
  id: string,
  session: Session,
  version?: number,
): Promise<void> {
  const current = session.record?.version;
  if (version === undefined || current === undefined || current < version) {
    const record = await directory.find(id).catch(() => undefined);
    if (record !== undefined) await applyRecord(session, record);
  }
  if (session.streams > 0 && session.record !== undefined)
    directory.synced(id, session.record.version ?? 0);
}
