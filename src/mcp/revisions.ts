/**
 * The protocol revisions Reservoir serves and what sets them apart, where an edge must know: which
 * are 2025-era (handshake, sessions; answered in that era's shape), and the one that allows
 * JSON-RPC batches (2025-03-26; 2025-06-18 removed them, 2026-07-28 forbids them).
 */

/** Revisions negotiated by `initialize`: their connections and sessions are 2025-era. */
export const LEGACY_REVISIONS: ReadonlySet<string> = new Set([
  '2024-11-05',
  '2025-03-26',
  '2025-06-18',
  '2025-11-25',
]);

/** The only revision whose clients may send batches. */
export const BATCH_REVISION = '2025-03-26';
