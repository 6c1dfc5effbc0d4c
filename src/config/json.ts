/**
 * Locates the first syntax error in a JSON text, with a message that does not depend on the Node
 * version (V8's JSON.parse messages change between releases, and some carry no position). Only
 * called after JSON.parse has failed.
 */
export interface JsonSyntaxError {
  /** Offset of the offending character (the text's length at an unexpected end). */
  offset: number;
  message: string;
}

export function locateJsonError(text: string): JsonSyntaxError {
  let i = 0;
  const fail = (expected: string): never => {
    const found = i >= text.length ? 'the end of the file' : `'${text[i]}'`;
    throw { offset: i, message: `expected ${expected}, got ${found}` } satisfies JsonSyntaxError;
  };
  const space = (): void => {
    while (i < text.length && ' \t\n\r'.includes(text[i]!)) i += 1;
  };
  const literal = (word: string): void => {
    for (const ch of word) {
      if (text[i] !== ch) fail(`'${word}'`);
      i += 1;
    }
  };
  const string = (): void => {
    i += 1;
    for (;;) {
      if (i >= text.length) fail("a closing '\"'");
      const ch = text[i]!;
      if (ch === '"') break;
      if (ch < ' ') fail('no control characters inside a string');
      if (ch === '\\') {
        i += 1;
        if (text[i] === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(i + 1, i + 5))) fail('4 hex digits after \\u');
          i += 4;
        } else if (!'"\\/bfnrt'.includes(text[i] ?? 'x'))
          fail('an escape (\\" \\\\ \\/ \\b \\f \\n \\r \\t \\u)');
      }
      i += 1;
    }
    i += 1;
  };
  const number = (): void => {
    const match = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/.exec(text.slice(i));
    if (match === null || match[0] === '' || match[0] === '-') fail('a value');
    i += match![0].length;
  };
  const value = (): void => {
    space();
    const ch = text[i];
    if (ch === '{') {
      i += 1;
      space();
      if (text[i] === '}') return void (i += 1);
      for (;;) {
        space();
        if (text[i] !== '"') fail('a property name in double quotes');
        string();
        space();
        if (text[i] !== ':') fail("':'");
        i += 1;
        value();
        space();
        if (text[i] === ',') i += 1;
        else if (text[i] === '}') return void (i += 1);
        else fail("',' or '}'");
      }
    }
    if (ch === '[') {
      i += 1;
      space();
      if (text[i] === ']') return void (i += 1);
      for (;;) {
        value();
        space();
        if (text[i] === ',') i += 1;
        else if (text[i] === ']') return void (i += 1);
        else fail("',' or ']'");
      }
    }
    if (ch === '"') return string();
    if (ch === 't') return literal('true');
    if (ch === 'f') return literal('false');
    if (ch === 'n') return literal('null');
    return number();
  };
  try {
    value();
    space();
    if (i < text.length) fail('the end of the file');
  } catch (error) {
    if (typeof error === 'object' && error !== null && 'offset' in error)
      return error as JsonSyntaxError;
    throw error;
  }
  return { offset: 0, message: 'invalid JSON' };
}
