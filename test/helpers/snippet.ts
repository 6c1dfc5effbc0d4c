/** A hit's snippet with its highlight ranges drawn as ⟦…⟧, for readable assertions (the text itself has no markers). */
export function drawn(hit: {
  snippet: string;
  highlights: readonly (readonly [number, number])[];
}): string {
  let out = '';
  let at = 0;
  for (const [start, end] of hit.highlights) {
    out += `${hit.snippet.slice(at, start)}⟦${hit.snippet.slice(start, end)}⟧`;
    at = end;
  }
  return out + hit.snippet.slice(at);
}
