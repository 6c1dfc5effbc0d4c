/**
 * What the byte-budget wrapper (budget.ts) knows of a PostgreSQL column's type, found by OID (a
 * statement's fields[].dataTypeID; a domain has its own OID, so is unknown here) or by declared name
 * (as pg_catalog.format_type prints it):
 *
 * - `sizing`: how the wrapper sizes its values (PgSizing); a type not here is sized by its cast.
 * - `width`: for a fixed-width type, the most bytes its text is sent as whatever the session's
 *   settings — DateStyle, IntervalStyle, extra_float_digits, TimeZone — set. Where every column of
 *   a statement has one and its rows are capped, their sum bounds all the statement can send: one
 *   whose bound is within the budget needs no sizing (`postgresBoundedRows`). Generous on purpose:
 *   a width is only compared with the budget, never told as a size.
 */
import type { PgSizing } from './budget.js';

interface PgType {
  oid: number;
  name: RegExp;
  sizing?: PgSizing;
  width?: number;
}

const TYPES: readonly PgType[] = [
  { oid: 25, name: /^text$/, sizing: 'string' },
  { oid: 1043, name: /^character varying(?:\(\d+\))?$/, sizing: 'string' },
  // a bpchar's padding is sent; its cast to text drops it
  { oid: 1042, name: /^(?:bpchar|character(?:\(\d+\))?)$/, sizing: 'string' },
  { oid: 16, name: /^boolean$/, sizing: 1, width: 1 }, // t or f
  { oid: 2950, name: /^uuid$/, sizing: 36, width: 36 },
  { oid: 21, name: /^smallint$/, width: 6 }, // -32768
  { oid: 23, name: /^integer$/, width: 11 }, // -2147483648
  { oid: 20, name: /^bigint$/, width: 20 }, // -9223372036854775808
  { oid: 26, name: /^oid$/, width: 10 }, // 4294967295
  { oid: 700, name: /^real$/, width: 32 }, // -3.4028235e+38, -Infinity, NaN (any float digits)
  { oid: 701, name: /^double precision$/, width: 32 }, // -2.2250738585072014e-308
  { oid: 1082, name: /^date$/, width: 32 }, // 5874897-12-31, 4714-11-24 BC, -infinity (any DateStyle)
  { oid: 1083, name: /^time(?:\(\d\))? without time zone$/, width: 32 }, // 24:00:00.000000
  { oid: 1266, name: /^time(?:\(\d\))? with time zone$/, width: 32 }, // and its offset, to the second
  // DateStyle Postgres spells the day's and month's names, and BC
  { oid: 1114, name: /^timestamp(?:\(\d\))? without time zone$/, width: 64 },
  // … and the zone's abbreviation, which a POSIX zone setting makes long
  { oid: 1184, name: /^timestamp(?:\(\d\))? with time zone$/, width: 512 },
];

const BY_OID = new Map(TYPES.map((type) => [type.oid, type]));

/** A statement's or table's columns as the wrapper takes them. */
export interface PgColumns {
  /** How each column is sized. */
  sizing: PgSizing[];
  /** The most bytes a row of them is sent as; undefined when a column is unbounded. */
  rowWidth: number | undefined;
}

/** Columns of the type OIDs `oids` (a statement's fields' dataTypeID). */
export function pgColumnsOfOids(oids: readonly number[]): PgColumns {
  return columnsOf(oids.map((oid) => BY_OID.get(oid)));
}

/** Columns of the declared `types`, as pg_catalog.format_type prints them. */
export function pgColumnsOfTypes(types: readonly string[]): PgColumns {
  return columnsOf(types.map((name) => TYPES.find((type) => type.name.test(name))));
}

function columnsOf(types: readonly (PgType | undefined)[]): PgColumns {
  let rowWidth: number | undefined = 0;
  for (const type of types)
    rowWidth =
      type?.width === undefined || rowWidth === undefined ? undefined : rowWidth + type.width;
  return { sizing: types.map((type) => type?.sizing ?? 'text'), rowWidth };
}
