/**
 * The most bytes a PostgreSQL value of a fixed-width type is sent as (its text form), whatever the
 * session's settings — DateStyle, IntervalStyle, extra_float_digits, TimeZone — set. Where every
 * column of a statement has such a bound and its rows are capped, their sum bounds all the statement
 * can send: one whose bound is within the byte budget needs no sizing (budget.ts `postgresBoundedRows`).
 * Generous on purpose: a bound is only compared with the budget, never told as a size.
 */

/** By type OID (a statement's fields[].dataTypeID; a domain has its own OID, so is unbounded). */
const WIDTH_BY_OID = new Map<number, number>([
  [16, 1], // bool: t or f
  [21, 6], // int2: -32768
  [23, 11], // int4: -2147483648
  [20, 20], // int8: -9223372036854775808
  [26, 10], // oid: 4294967295
  [700, 32], // float4: -3.4028235e+38, -Infinity, NaN (any extra_float_digits)
  [701, 32], // float8: -2.2250738585072014e-308
  [1082, 32], // date: 5874897-12-31, 4714-11-24 BC, -infinity (any DateStyle)
  [1083, 32], // time: 24:00:00.000000
  [1266, 32], // timetz: the time and its offset, to the second
  [1114, 64], // timestamp: DateStyle Postgres spells the day's and month's names, and BC
  [1184, 512], // timestamptz: … and the zone's abbreviation, which a POSIX zone setting makes long
  [2950, 36], // uuid
]);

/** By declared type, as pg_catalog.format_type prints it (a precision in parentheses allowed). */
const WIDTH_BY_TYPE: readonly [RegExp, number][] = [
  [/^boolean$/, 1],
  [/^smallint$/, 6],
  [/^integer$/, 11],
  [/^bigint$/, 20],
  [/^oid$/, 10],
  [/^(?:real|double precision)$/, 32],
  [/^(?:date|time(?:\(\d\))? with(?:out)? time zone)$/, 32],
  [/^timestamp(?:\(\d\))? without time zone$/, 64],
  [/^timestamp(?:\(\d\))? with time zone$/, 512],
  [/^uuid$/, 36],
];

/** The most bytes a row of columns of the type OIDs `oids` is sent as; undefined when unbounded. */
export function rowWidthOfOids(oids: readonly number[]): number | undefined {
  let sum = 0;
  for (const oid of oids) {
    const width = WIDTH_BY_OID.get(oid);
    if (width === undefined) return undefined;
    sum += width;
  }
  return sum;
}

/** The most bytes a row of columns of the declared `types` is sent as; undefined when unbounded. */
export function rowWidthOfTypes(types: readonly string[]): number | undefined {
  let sum = 0;
  for (const type of types) {
    const width = WIDTH_BY_TYPE.find(([pattern]) => pattern.test(type))?.[1];
    if (width === undefined) return undefined;
    sum += width;
  }
  return sum;
}
