/**
 * Bounded XML helpers for the formats parsed here (PPTX slides, EPUB packages). No entity is ever
 * expanded beyond XML's five and character references: a document type with entity declarations is
 * refused before parsing, so "billion laughs" cannot start. Parsing is by regular expressions over
 * the well-known elements, linear in the input.
 */
import { DocumentError } from './types.js';

/** Throws when `xml` declares entities (the only way to make XML expand). */
export function refuseEntities(xml: string, part: string): void {
  if (/<!ENTITY/i.test(xml))
    throw new DocumentError(
      'invalid_document',
      `${part} declares XML entities, which are never expanded`,
      { part },
    );
}

/** Text with XML's predefined entities and character references decoded; others left as written. */
export function decodeXmlText(text: string): string {
  return text.replace(
    /&(#x[0-9a-fA-F]{1,6}|#\d{1,7}|lt|gt|amp|quot|apos);/g,
    (whole, name: string) => {
      if (name.startsWith('#')) {
        const code = name[1] === 'x' ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10);
        return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
      }
      return { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" }[name] ?? whole;
    },
  );
}

/** The value of attribute `name` in the start tag `tag`, decoded. */
export function attribute(tag: string, name: string): string | undefined {
  const found = new RegExp(`\\s${name}\\s*=\\s*("([^"]*)"|'([^']*)')`).exec(tag);
  if (found === null) return undefined;
  return decodeXmlText(found[2] ?? found[3] ?? '');
}

/** Resolves `target` (a relative path inside a zip) against the folder of `base`. */
export function resolveZipPath(base: string, target: string): string {
  if (target.startsWith('/')) return target.slice(1);
  const parts = base.split('/').slice(0, -1);
  for (const segment of target.split('/')) {
    if (segment === '..') parts.pop();
    else if (segment !== '.' && segment !== '') parts.push(segment);
  }
  return parts.join('/');
}

/** The relationships of `part` (`Id` → target path), from its `_rels/*.rels` entry. */
export function relationships(relsXml: string | undefined, part: string): Map<string, string> {
  const map = new Map<string, string>();
  if (relsXml === undefined) return map;
  refuseEntities(relsXml, part);
  for (const match of relsXml.matchAll(/<Relationship\b[^>]*>/g)) {
    const id = attribute(match[0], 'Id');
    const target = attribute(match[0], 'Target');
    const mode = attribute(match[0], 'TargetMode');
    if (id !== undefined && target !== undefined)
      map.set(id, mode === 'External' ? target : resolveZipPath(part, target));
  }
  return map;
}
