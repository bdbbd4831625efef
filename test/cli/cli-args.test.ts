/**
 * parseFlags (lib/platform/cli-args.ts) answers a command line without flags (`rbp detect APP`, run
 * by a platform on every build) without Node.js's parseArgs: the answer must be the one parseArgs
 * gives, for every command.
 */
import { parseArgs } from 'node:util';
import { describe, expect, it } from 'vitest';
import { parseFlags } from '../../lib/platform/cli-args.ts';
import { COMMANDS, parseOptions } from '../../lib/platform/cli-commands.ts';

describe('parseFlags without any flag', () => {
  const lines = [[], ['app'], ['app', 'more'], ['-'], ['app', '-'], ['./-app'], ['app with spaces', '']];
  it.each(COMMANDS.map((c) => [c.name, c] as const))('rbp %s: the positionals parseArgs reads, no values', (_name, c) => {
    for (const args of lines) {
      const { tokens } = parseArgs({ args, options: parseOptions(c), allowPositionals: true, strict: false, tokens: true });
      expect(tokens.every((t) => t.kind === 'positional')).toBe(true);
      expect(parseFlags(c, args)).toEqual({ values: {}, positionals: tokens.map((t) => (t.kind === 'positional' ? t.value : '')) });
    }
  });

  it('a flag anywhere still goes through parseArgs and its rules', () => {
    const detect = COMMANDS.find((c) => c.name === 'detect')!;
    expect(parseFlags(detect, ['app', '--json'])).toEqual({ values: { json: true }, positionals: ['app'] });
    expect(() => parseFlags(detect, ['app', '--no-such-flag'])).toThrow(/Unknown flag --no-such-flag/);
    expect(parseFlags(detect, ['app', '--', 'x']).positionals).toEqual(['app', 'x']);
  });
});
