/**
 * Afterwards no module outside lib/config reads `CC_*` or `RBP_*` from an environment object
 * (issue #13): every read goes through lib/config/read.ts, so that whitespace-only means unset and
 * an invalid value is the variable's own user error everywhere. This test reads the sources of
 * lib/ and buildpacks/* /src and lists every raw read it finds outside the allowed places.
 *
 * ALLOWED holds the files still being rewritten elsewhere; an entry that no longer matches
 * anything fails too, so the list only shrinks.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/rbp.ts';

/** Files (or folders, ending in /) whose raw reads are known, with who is moving them and why. */
const ALLOWED: { path: string; variables?: string[]; why: string }[] = [];

const ENV = String.raw`\b[\w.]*?(?:env|Env|ENV)\)?`;
/** What a raw read looks like; the group is the variable (or the expression naming it). */
const PATTERNS: RegExp[] = [
  // env.CC_X, ctx.env.CC_X, process.env.RBP_X, opts.env?.RBP_X
  new RegExp(String.raw`${ENV}\s*\??\.\s*((?:CC|RBP)_\w+)\b(?!\s*=[^=])`, 'g'),
  // env['CC_X'], env["RBP_X"]
  new RegExp(String.raw`${ENV}\s*(?:\?\.)?\[\s*['"\x60]((?:CC|RBP)_\w+)['"\x60]\s*\](?!\s*=[^=])`, 'g'),
  // env[MIRROR_VARIABLE], env[operatorVariable(id)]: a constant or helper naming one of them
  new RegExp(String.raw`${ENV}\s*(?:\?\.)?\[\s*(\w*VARIABLE\w*|operatorVariable\([^)]*\))\s*\](?!\s*=[^=])`, 'g'),
  // env[name]?.trim(): a private reader of its own
  new RegExp(String.raw`${ENV}\s*(?:\?\.)?\[\s*([^\]]+)\]\s*\?\.\s*trim\(\)`, 'g'),
];

function sources(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(rel);
      else if (/\.(ts|mts|js|mjs)$/.test(e.name) && !e.name.endsWith('.test.ts')) out.push(rel);
    }
  };
  walk('lib');
  for (const bp of fs.readdirSync(path.join(ROOT, 'buildpacks'))) if (fs.existsSync(path.join(ROOT, 'buildpacks', bp, 'src'))) walk(`buildpacks/${bp}/src`);
  return out.filter((f) => !f.startsWith('lib/config/'));
}

/** The code of a line without its comment (a line of a block comment is all comment). */
function code(line: string): string {
  if (/^\s*(\*|\/\*|\/\/)/.test(line)) return '';
  return line.replace(/\s\/\/\s.*$/, '');
}

interface Read {
  file: string;
  line: number;
  variable: string;
  text: string;
}

function rawReads(): Read[] {
  const found: Read[] = [];
  for (const file of sources()) {
    const lines = fs.readFileSync(path.join(ROOT, file), 'utf8').split('\n');
    lines.forEach((l, i) => {
      const c = code(l);
      for (const re of PATTERNS) for (const m of c.matchAll(re)) found.push({ file, line: i + 1, variable: m[1]!, text: l.trim() });
    });
  }
  return found;
}

const allowedBy = (r: Read) =>
  ALLOWED.find((a) => (a.path.endsWith('/') ? r.file.startsWith(a.path) : r.file === a.path) && (!a.variables || a.variables.includes(r.variable)));

describe('raw CC_*/RBP_* reads', () => {
  const reads = rawReads();

  it('the scanner sees the kinds of reads it is meant to find', () => {
    const sample = [
      'const a = env.CC_WEBROOT?.trim();',
      'if (process.env.RBP_BUILDPACKS_DIR) return x;',
      "const b = ctx.env['CC_CACHE_FILE'];",
      'const c = env[MIRROR_VARIABLE]?.trim();',
      'if (!t.env[operatorVariable(id)]) return;',
      'const v = env[name]?.trim();',
    ];
    const hits = sample.map((s) => PATTERNS.some((re) => [...code(s).matchAll(re)].length > 0));
    expect(hits).toEqual(sample.map(() => true));
    // Writes, comments and lib/config's own reader are not reads.
    for (const s of ['process.env.RBP_LOG_LEVEL = level;', ' * env.CC_WEBROOT is read once', "const w = value(env, 'CC_WEBROOT');"]) {
      expect(
        PATTERNS.some((re) => [...code(s).matchAll(re)].length > 0),
        s,
      ).toBe(false);
    }
  });

  it('none outside lib/config and the allowed files', () => {
    const stray = reads.filter((r) => !allowedBy(r)).map((r) => `${r.file}:${r.line}: ${r.variable}: ${r.text}`);
    expect(stray, `read these through lib/config/read.ts (read, value, raw, isSet, readAppPath):\n${stray.join('\n')}`).toEqual([]);
  });

  it('every allow-list entry still matches a read (remove the ones that do not)', () => {
    const stale = ALLOWED.filter((a) => !reads.some((r) => allowedBy(r) === a)).map((a) => a.path);
    expect(stale).toEqual([]);
  });
});
