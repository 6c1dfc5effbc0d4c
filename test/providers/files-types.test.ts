// Pins what type a file arrives as: source code and config formats are text, whatever the MIME
// database says about their extension, and an extensionless name is never looked up as if it were an
// extension (a script called `run` is not `application/x-makeself`): it is sniffed. A table over 100
// common extensions and 20 extensionless names; then, through the real SDK client over stdio in both
// eras, the files the issue names read as text and `?lines=` reads them.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isTextualMime, mimeFromName, toContents } from '../../src/providers/utils/content.js';
import { ensureBuilt } from '../helpers/build.js';
import { Cleanup, connectStdio, ERAS } from '../helpers/clients.js';
import { eventuallyAccepted } from '../helpers/eventually.js';
import { fileUri, makeTempDir, removeTree, writeTree } from '../helpers/tree.js';

const SOURCE = 'line one\nline two ✓\n';

// Extension → the type it must be served as (each textual).
const EXTENSIONS: Record<string, string> = {
  js: 'text/javascript',
  mjs: 'text/javascript',
  cjs: 'text/javascript',
  jsx: 'text/jsx',
  ts: 'text/x-typescript',
  tsx: 'text/tsx',
  mts: 'text/x-typescript',
  cts: 'text/x-typescript',
  json: 'application/json',
  jsonc: 'application/json',
  json5: 'application/json5',
  yaml: 'text/yaml',
  yml: 'text/yaml',
  toml: 'application/toml',
  ini: 'text/plain',
  cfg: 'text/plain',
  conf: 'text/plain',
  env: 'text/plain',
  properties: 'text/x-java-properties',
  xml: 'application/xml',
  html: 'text/html',
  htm: 'text/html',
  css: 'text/css',
  scss: 'text/x-scss',
  sass: 'text/x-sass',
  less: 'text/less',
  md: 'text/markdown',
  markdown: 'text/markdown',
  mdx: 'text/mdx',
  rst: 'text/x-rst',
  txt: 'text/plain',
  adoc: 'text/asciidoc',
  tex: 'application/x-tex',
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  sql: 'application/sql',
  graphql: 'application/graphql',
  gql: 'application/graphql',
  proto: 'text/x-protobuf',
  py: 'text/x-python',
  pyi: 'text/x-python',
  rb: 'text/x-ruby',
  go: 'text/x-go',
  rs: 'text/x-rust',
  java: 'text/x-java-source',
  kt: 'text/x-kotlin',
  kts: 'text/x-kotlin',
  scala: 'text/x-scala',
  groovy: 'text/x-groovy',
  gradle: 'text/x-groovy',
  c: 'text/x-c',
  h: 'text/x-c',
  cc: 'text/x-c',
  cpp: 'text/x-c',
  hpp: 'text/x-c',
  swift: 'text/x-swift',
  cs: 'text/x-csharp',
  fs: 'text/x-fsharp',
  vb: 'text/x-vb',
  php: 'application/x-httpd-php',
  pl: 'application/x-perl',
  pm: 'application/x-perl',
  lua: 'text/x-lua',
  r: 'text/x-r',
  dart: 'text/x-dart',
  ex: 'text/x-elixir',
  exs: 'text/x-elixir',
  erl: 'text/x-erlang',
  hs: 'text/x-haskell',
  elm: 'text/x-elm',
  clj: 'text/x-clojure',
  edn: 'text/x-clojure',
  lisp: 'text/x-lisp',
  el: 'text/x-lisp',
  scm: 'text/x-scheme',
  ml: 'text/x-ocaml',
  nim: 'text/x-nim',
  zig: 'text/x-zig',
  sol: 'text/x-solidity',
  jl: 'text/x-julia',
  sh: 'application/x-sh',
  bash: 'text/x-shellscript',
  zsh: 'text/x-shellscript',
  fish: 'text/x-shellscript',
  csh: 'text/x-shellscript',
  ps1: 'text/x-powershell',
  bat: 'text/x-msdos-batch',
  cmd: 'text/x-msdos-batch',
  awk: 'text/x-awk',
  vim: 'text/x-vim',
  tf: 'text/x-terraform',
  hcl: 'text/x-hcl',
  nix: 'text/x-nix',
  mk: 'text/x-makefile',
  cmake: 'text/x-cmake',
  vue: 'text/x-vue',
  svelte: 'text/x-svelte',
  lock: 'text/plain',
  log: 'text/plain',
  diff: 'text/x-diff',
  patch: 'text/x-diff',
  svg: 'image/svg+xml',
  coffee: 'text/coffeescript',
  tcl: 'text/x-tcl',
  asm: 'text/x-asm',
};

// Names without an extension: the well-known ones by name, the rest sniffed (valid UTF-8 → text/plain).
const NAMES: Record<string, string> = {
  Makefile: 'text/x-makefile',
  GNUmakefile: 'text/x-makefile',
  Dockerfile: 'text/x-dockerfile',
  Containerfile: 'text/x-dockerfile',
  'CMakeLists.txt': 'text/x-cmake',
  Gemfile: 'text/x-ruby',
  Rakefile: 'text/x-ruby',
  Vagrantfile: 'text/x-ruby',
  Jenkinsfile: 'text/x-groovy',
  Procfile: 'text/plain',
  run: 'text/plain',
  bat: 'text/plain',
  dart: 'text/plain',
  cjs: 'text/plain',
  configure: 'text/plain',
  LICENSE: 'text/plain',
  README: 'text/plain',
  '.bashrc': 'text/plain',
  '.gitignore': 'text/plain',
  '.env': 'text/plain',
};

describe('file types by name', () => {
  it('covers at least 100 extensions and 20 extensionless names', () => {
    expect(Object.keys(EXTENSIONS).length).toBeGreaterThanOrEqual(100);
    expect(Object.keys(NAMES)).toHaveLength(20);
  });

  it.each(Object.entries(EXTENSIONS))('serves a UTF-8 .%s file as text of type %s', (ext, type) => {
    expect(isTextualMime(type)).toBe(true);
    expect(toContents('file:///x', `x.${ext}`, Buffer.from(SOURCE))).toEqual({
      uri: 'file:///x',
      mimeType: type,
      text: SOURCE,
    });
    expect(mimeFromName(`Dir/Name.${ext.toUpperCase()}`)).toBe(type);
  });

  it.each(Object.entries(NAMES))(
    'serves a UTF-8 file called %s as text of type %s',
    (name, type) => {
      expect(toContents('file:///x', name, Buffer.from(SOURCE))).toEqual({
        uri: 'file:///x',
        mimeType: type,
        text: SOURCE,
      });
    },
  );

  it('still serves binary bytes under an extensionless or source name as a blob, byte for byte', () => {
    // An ELF executable says what it is, whatever its name.
    const elf = Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 0xff]);
    for (const name of ['run', 'x.cjs'])
      expect(toContents('file:///x', name, elf)).toEqual({
        uri: 'file:///x',
        mimeType: 'application/x-elf',
        blob: elf.toString('base64'),
      });
    // Bytes without a signature keep the name's type, as a blob.
    const bytes = Buffer.from([0x01, 0x02, 0, 1, 0xff]);
    expect(toContents('file:///x', 'run', bytes)).toEqual({
      uri: 'file:///x',
      mimeType: 'application/octet-stream',
      blob: bytes.toString('base64'),
    });
    expect(toContents('file:///x', 'x.cjs', bytes)).toEqual({
      uri: 'file:///x',
      mimeType: 'text/javascript',
      blob: bytes.toString('base64'),
    });
  });

  it('keeps media types from the MIME database and leaves an extensionless name without a listed type', () => {
    expect(mimeFromName('photo.PNG')).toBe('image/png');
    expect(mimeFromName('archive.zip')).toBe('application/zip');
    expect(mimeFromName('run')).toBeUndefined();
    expect(mimeFromName('exe')).toBeUndefined();
  });
});

describe.each(ERAS)('source files over stdio, %s era', (era) => {
  const cleanup = new Cleanup();
  let root: string;

  beforeAll(async () => {
    await ensureBuilt();
    root = makeTempDir();
    cleanup.add(() => removeTree(root));
    writeTree(root, {
      run: '#!/bin/sh\necho hi\n',
      'a.cjs': 'module.exports = 1;\n',
      'b.dart': 'void main() {}\n',
      'c.bat': '@echo off\r\necho hi\r\n',
    });
  });
  afterAll(() => cleanup.run());

  it('reads a script called run, .cjs, .dart and .bat files as text, and reads their lines', async () => {
    const { client } = await connectStdio(era, [root], [], cleanup);
    const expected: Record<string, [string, string, string]> = {
      run: ['text/plain', '#!/bin/sh\necho hi\n', 'echo hi\n'],
      'a.cjs': ['text/javascript', 'module.exports = 1;\n', ''],
      'b.dart': ['text/x-dart', 'void main() {}\n', ''],
      'c.bat': ['text/x-msdos-batch', '@echo off\r\necho hi\r\n', 'echo hi\r\n'],
    };
    for (const [name, [mimeType, text, second]] of Object.entries(expected)) {
      const read = await client.readResource({ uri: fileUri(root, name) });
      expect(read.contents, name).toEqual([expect.objectContaining({ mimeType, text })]);
      const lines = await client.readResource({ uri: `${fileUri(root, name)}?lines=2` });
      expect(lines.contents[0], name).toMatchObject({ text: second });
    }
    // The listing sniffs what the name does not say: the script's first bytes are text. A page
    // reads heads for a few ms at most and leaves the rest to a later listing (files/heads.ts), so on
    // a loaded machine the first listing may come without it: listings are asked until one has it.
    const types = await eventuallyAccepted(
      async (): Promise<Record<string, string | undefined>> => {
        const listed = await client.listResources();
        return Object.fromEntries(listed.resources.map((r) => [join('/', r.name), r.mimeType]));
      },
      (listed) => listed['/run'] !== undefined,
      "the script's sniffed type on a listing",
    );
    expect(types['/run']).toBe('text/plain');
    expect(types['/a.cjs']).toBe('text/javascript');
  });
});

// A name is data: the type tables must not answer for Object.prototype's members. A file called
// `__proto__` once listed with an object for its type, which broke its whole directory's listing.
const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf'];

describe('files named after Object.prototype members', () => {
  it('have no type by name, nor by extension', () => {
    for (const name of PROTOTYPE_NAMES) {
      expect(mimeFromName(name), name).toBeUndefined();
      expect(mimeFromName(`x.${name}`), name).toBeUndefined();
      expect(mimeFromName(`Dir/${name.toUpperCase()}`), name).toBeUndefined();
    }
  });

  it.each(ERAS)(
    'list and read beside the rest of their directory over stdio, %s era',
    async (era) => {
      const cleanup = new Cleanup();
      try {
        await ensureBuilt();
        const root = makeTempDir();
        cleanup.add(() => removeTree(root));
        writeTree(root, {
          ...Object.fromEntries(PROTOTYPE_NAMES.map((name) => [name, `${name}\n`])),
          'readme.md': 'readme.md\n',
        });
        const { client } = await connectStdio(era, [root], [], cleanup);
        const listed = await client.listResources();
        expect(listed.resources.map((r) => r.name).sort()).toEqual(
          [...PROTOTYPE_NAMES, 'readme.md'].sort(),
        );
        for (const resource of listed.resources) {
          // a type the bytes gave (sniffed, when the listing had the time) or none — never a
          // member of Object.prototype
          if (resource.mimeType !== undefined)
            expect(resource.mimeType, resource.name).toMatch(/^text\//);
          const read = await client.readResource({ uri: resource.uri });
          expect(read.contents[0], resource.name).toMatchObject({ text: `${resource.name}\n` });
        }
      } finally {
        await cleanup.run();
      }
    },
  );
});
