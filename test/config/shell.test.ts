/**
 * The reader rendered in sh (lib/config/shell.ts) against the reader itself (lib/config/read.ts), on
 * the same values: the launch script written at build reads the run environment with the first, the
 * Node.js launcher with the second, and they must agree. Where sh cannot read a value the reader
 * accepts (seconds written 1e3 or 0x10), the script hands it over: it never refuses what the reader
 * accepts, and never accepts what the reader refuses.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { read } from '../../lib/config/read.ts';
import { SH_READ_HELPERS, shQuote, shRead } from '../../lib/config/shell.ts';

type ShResult = { value: string } | { bad: string; why: string } | { handed: string };

/** Each value through the sh reader of `name`, in one dash run. */
function shReadAll(name: string, values: string[]): ShResult[] {
  const script = [
    ...SH_READ_HELPERS,
    'hand() { [ -n "$why" ] || why=$1; }',
    ...values.flatMap((v) => [
      `why= bad= badWhy= v=; ${name}=${shQuote(v)}`,
      ...shRead(name, 'v'),
      `if [ -n "$bad" ]; then printf 'bad\\t%s\\t%s\\n' "$badValue" "$badWhy"; elif [ -n "$why" ]; then printf 'hand\\t%s\\n' "$why"; else printf 'value\\t%s\\n' "$v"; fi`,
    ]),
  ].join('\n');
  const out = execFileSync('dash', ['-c', script], { encoding: 'utf8' });
  return out
    .trimEnd()
    .split('\n')
    .map((l) => {
      const [kind, a, b] = l.split('\t');
      return kind === 'value' ? { value: a! } : kind === 'bad' ? { bad: a!, why: b! } : { handed: a! };
    });
}

/** The reader's own answer: its value, or the user error's id. */
function tsRead(name: string, value: string): { value: unknown } | { error: string } {
  try {
    return { value: read(name === 'X' ? {} : { [name]: value }, name)?.value };
  } catch (e) {
    return { error: (e as { data?: { id: string } }).data?.id ?? String(e) };
  }
}

describe('the sh reader agrees with the reader', () => {
  it('port: the same number, the same refusals (leading zeros, whitespace, range, not digits)', () => {
    const values = ['', '   ', '8080', ' 8181 ', '0080', '000000080', '1', '65535', '65536', '0', '00', 'eighty', '12a', '-1', '1.5', '99999999'];
    const sh = shReadAll('CC_STATIC_PORT', values);
    values.forEach((v, i) => {
      const ts = tsRead('CC_STATIC_PORT', v);
      if ('error' in ts) expect(sh[i], v).toEqual({ bad: v.trim(), why: 'CC_STATIC_PORT is not a port' });
      else expect(sh[i], v).toEqual({ value: String(ts.value) });
    });
  });

  it('enum: the value, else the default; anything else refused', () => {
    const values = ['', ' ', 'no', ' on-failure ', 'on-failure', 'always', 'NO', 'no,on-failure'];
    const sh = shReadAll('RBP_RESTART', values);
    values.forEach((v, i) => {
      const ts = tsRead('RBP_RESTART', v);
      if ('error' in ts) expect(sh[i], v).toEqual({ bad: v.trim(), why: 'RBP_RESTART is not one of no, on-failure' });
      else expect(sh[i], v).toEqual({ value: String(ts.value) });
    });
  });

  it('seconds: the same microseconds for plain decimals; handed over, never refused, when sh cannot read it', () => {
    const values = ['', '1', '0.2', ' .25 ', '2.', '00.5', '10', '1.1234567', '0.000001', '0', '0.0', '-1', 'abc', '1e3', '0x10', '1..2', '.'];
    const sh = shReadAll('RBP_RESTART_FIRST_DELAY', values);
    values.forEach((v, i) => {
      const ts = tsRead('RBP_RESTART_FIRST_DELAY', v);
      const r = sh[i]!;
      if ('value' in r) {
        expect('value' in ts, `${v}: sh read it, so must the reader`).toBe(true);
        expect(Number(r.value), v).toBe(Math.floor(Math.round((ts as { value: number }).value * 1e7) / 10));
      } else {
        expect(r, v).toEqual({ handed: `RBP_RESTART_FIRST_DELAY=${v.trim()}: the launch script reads a plain decimal number of seconds greater than 0` });
      }
    });
    // The plain decimals the platform writes are all read in sh.
    expect(sh.slice(0, 9).every((r) => 'value' in r)).toBe(true);
  });

  it('bytes: the same number, the same refusals; handed over when too long to be sure of', () => {
    const values = [
      '',
      ' ',
      '1073741824',
      ' 536870912 ',
      '0001024',
      '0',
      '000',
      '-1',
      '1.5',
      '1G',
      '12 34',
      '999999999999999',
      '9007199254740993',
      '99999999999999999999',
    ];
    const sh = shReadAll('RBP_INSTANCE_MEMORY', values);
    values.forEach((v, i) => {
      const ts = tsRead('RBP_INSTANCE_MEMORY', v);
      const r = sh[i]!;
      if ('handed' in r) {
        expect(r.handed, v).toBe(`RBP_INSTANCE_MEMORY=${v.trim()}: the launch script reads numbers of up to 15 digits`);
        expect(v.trim().length, v).toBeGreaterThan(15);
      } else if ('error' in ts) expect(r, v).toEqual({ bad: v.trim(), why: 'RBP_INSTANCE_MEMORY is not a number of bytes greater than 0' });
      else expect(r, v).toEqual({ value: ts.value === undefined ? '' : String(ts.value as number) });
    });
    // What rbp sets (--instance, --memory) is read in sh.
    expect(sh.slice(0, 5).every((r) => 'value' in r)).toBe(true);
  });
});
