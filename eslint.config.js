// Lint rules carry the style: type-only imports, node: protocol, and no console in src/
// (stdout is the protocol over stdio; logs go to stderr through the logger). Layout is Prettier's
// (.prettierrc.json): eslint-config-prettier, last, turns off every rule that would fight it.
import js from '@eslint/js';
import prettier from 'eslint-config-prettier/flat';
import n from 'eslint-plugin-n';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'coverage/', '.bench/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    plugins: { n },
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        fetch: 'readonly',
        Request: 'readonly',
        Response: 'readonly',
        Headers: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        performance: 'readonly',
        queueMicrotask: 'readonly',
        structuredClone: 'readonly',
      },
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_' },
      ],
      'n/prefer-node-protocol': 'error',
      eqeqeq: ['error', 'smart'],
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      'no-console': 'error',
      // Before Node 24, clearImmediate given a timer still lowers the process's count of pending
      // immediates (nodejs/node#57063), and a lone setImmediate then never runs: hand it only a value
      // typed as an Immediate, never one cast to it.
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "CallExpression[callee.name='clearImmediate'] > :matches(TSAsExpression, TSTypeAssertion, TSNonNullExpression)",
          message:
            'clearImmediate takes only an Immediate (nodejs/node#57063): keep timers and immediates in separate variables.',
        },
      ],
    },
  },
  {
    // better-sqlite3 12 aborts on Node 24 and 13 crashes on Node 20: code gets the build this runtime
    // runs from src/core/sqlite-driver.ts (types may still come from the package).
    files: ['src/**/*.ts', 'test/**/*.ts'],
    ignores: ['src/core/sqlite-driver.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            {
              name: 'better-sqlite3',
              allowTypeImports: true,
              message: 'Load the driver with loadSqliteDriver() from src/core/sqlite-driver.ts.',
            },
          ],
        },
      ],
    },
  },
  {
    // A blob: URL is a document of the explorer's origin when opened in a tab: only inert.ts,
    // which types every one so that it cannot run script, may make them.
    files: ['src/ui/**/*.ts', 'src/ui/**/*.tsx'],
    ignores: ['src/ui/inert.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        {
          object: 'URL',
          property: 'createObjectURL',
          message:
            'Make resource URLs with src/ui/inert.ts (raster, download or rasterised SVG), never a blob of another type.',
        },
      ],
    },
  },
  prettier,
);
