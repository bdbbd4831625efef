// ESLint over the project's own code: typescript-eslint's strict and stylistic type-checked rules.
// Formatting is Prettier's job (`prettier --check .` runs beside ESLint in `npm run lint`).
import eslint from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  {
    // dist/ is built, fixtures/ are the apps and buildpacks under test (their own code, their own style).
    ignores: ['dist/', 'node_modules/', 'fixtures/', 'bench/results/', '.rbp-tmp/', '.dist-*/', '**/__snapshots__/'],
  },
  eslint.configs.recommended,
  tseslint.configs.strictTypeChecked,
  tseslint.configs.stylisticTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
  },
  {
    rules: {
      // Layer metadata types must be `type` aliases: an interface has no implicit index signature for Record<string, unknown>.
      '@typescript-eslint/consistent-type-definitions': 'off',
      // A leading `_` names what is left out on purpose (`const { a: _, ...rest } = x`, an unused parameter).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      // The contract treats a blank variable as unset: `env.X || fallback` on strings is meant; on booleans `||` is logic.
      '@typescript-eslint/prefer-nullish-coalescing': ['error', { ignorePrimitives: { string: true, boolean: true } }],
      // readToml<T>() and its kin hand parsed data back as the caller's declared type, on purpose.
      '@typescript-eslint/no-unnecessary-type-parameters': 'off',
      // Environments are records keyed by variable name: `delete env[name]` unsets one.
      '@typescript-eslint/no-dynamic-delete': 'off',
      // `() => {}` is how the code ignores an event or a rejection it has already accounted for.
      '@typescript-eslint/no-empty-function': ['error', { allow: ['arrowFunctions'] }],
      // tsconfig has noUncheckedIndexedAccess: `x[i]!` is how this code says "checked above", on purpose.
      '@typescript-eslint/no-non-null-assertion': 'off',
      // Messages interpolate counts, ports, exit codes and flags: numbers and booleans print as meant.
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      // `() => void`-returning arrow shorthands (`(g) => tx.recordGroup(g)`) are the house style for callbacks.
      '@typescript-eslint/no-confusing-void-expression': ['error', { ignoreArrowShorthand: true }],
    },
  },
  {
    // Tests probe parsed JSON (rbp --json, image labels, SBOMs) whose shape is what they assert, and
    // vitest's asymmetric matchers (expect.any, expect.stringMatching) are typed `any`.
    files: ['test/**', '**/*.test.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      // Test callbacks are async to fit the Promise-taking APIs they exercise, awaited or not.
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    // Tests match the ANSI escapes (\x1b) that the progress display writes.
    files: ['test/cli/**'],
    rules: { 'no-control-regex': 'off' },
  },
  {
    // The build and bench scripts are plain ES modules outside tsconfig.json: no type information.
    files: ['**/*.js', '**/*.mjs'],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: {
      globals: {
        process: 'readonly',
        console: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        performance: 'readonly',
        Buffer: 'readonly',
        fetch: 'readonly',
      },
    },
  },
);
