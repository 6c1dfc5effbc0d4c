/**
 * Word segmentation for scripts written without spaces. SQLite's `unicode61` tokenizer splits on
 * spaces and punctuation only, so a run of Chinese or Japanese (资源订阅) would be one token. Runs of
 * Han, Hiragana and Katakana are split into words with `Intl.Segmenter` — at index time and at query
 * time alike — so 资源订阅 is found by 资源 and by 订阅. Text without such characters is returned as
 * it is, at the cost of one regular-expression test.
 */

/** Languages whose word segmenters may be used; the first one that the runtime supports is used. */
export const SEGMENTER_LANGUAGES = ['zh', 'ja'] as const;
export type SegmenterLanguage = (typeof SEGMENTER_LANGUAGES)[number];

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}]/u;
const CJK_RUN = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\u30fc]+/gu;

/** Splits runs of CJK characters into words separated by spaces. */
export class Segmenter {
  private readonly segmenters: Intl.Segmenter[];

  constructor(languages: readonly SegmenterLanguage[] = SEGMENTER_LANGUAGES) {
    this.segmenters = languages.map(
      (language) => new Intl.Segmenter(language, { granularity: 'word' }),
    );
  }

  /** Whether any segmenter is configured. */
  get enabled(): boolean {
    return this.segmenters.length > 0;
  }

  /** `text` with every CJK run split into space-separated words (unchanged when it has none). */
  segment(text: string): string {
    if (this.segmenters.length === 0 || !CJK.test(text)) return text;
    return text.replace(CJK_RUN, (run) => ` ${this.words(run).join(' ')} `);
  }

  /** The words of one string, as the index sees them (CJK runs split; nothing else changed). */
  words(run: string): string[] {
    const segmenter = this.pick(run);
    const words: string[] = [];
    for (const part of segmenter.segment(run))
      if (part.segment.trim() !== '') words.push(part.segment);
    return words;
  }

  /** Japanese text (it has kana) goes to the `ja` segmenter when there is one; anything else to the first. */
  private pick(run: string): Intl.Segmenter {
    const first = this.segmenters[0]!;
    if (this.segmenters.length === 1 || !/[\p{Script=Hiragana}\p{Script=Katakana}]/u.test(run))
      return first;
    return this.segmenters.find((s) => s.resolvedOptions().locale.startsWith('ja')) ?? first;
  }
}

/** Whether a string has characters this module segments. */
export function hasCjk(text: string): boolean {
  return CJK.test(text);
}
