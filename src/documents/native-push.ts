/**
 * pdf.js's legacy build bundles core-js, which on V8 ≤ 12.1 (Node 20) replaces
 * `Array.prototype.push` with a shim written in JavaScript (V8 then threw the wrong error for a
 * read-only `length`): every push of pdf.js's text layout runs through it, a quarter of a PDF's
 * conversion time. Conversions run in a worker thread of their own (pool.ts), so the engine's push
 * is put back after pdf.js loads each of its two modules (the API, then its worker code on the first
 * document). The shim differs only for arrays past 2^32 items or with a read-only `length`, which
 * neither pdf.js nor this code makes. Newer V8 keeps its own push, and this does nothing.
 */
const NATIVE_PUSH = Array.prototype.push;

/** Puts the engine's `Array.prototype.push` back if a polyfill replaced it. */
export function restoreNativePush(): void {
  if (Array.prototype.push === NATIVE_PUSH) return;
  Object.defineProperty(Array.prototype, 'push', {
    value: NATIVE_PUSH,
    writable: true,
    enumerable: false,
    configurable: true,
  });
}
