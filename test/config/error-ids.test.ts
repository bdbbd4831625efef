/**
 * Every user error id in lib/ and buildpacks/ is rendered in a snapshot (a __snapshots__ file or an
 * inline snapshot, in test/, lib/ or buildpacks/): what a user reads when it fails is reviewed text, not a
 * guess. An id that no snapshot renders fails here until a snapshot test renders it or the code
 * stops producing it; an id that only a snapshot still names (removed from the code) is listed
 * too, so the snapshots do not keep dead errors.
 *
 * Ids are found where the code writes them: `id: 'a/b'` (ternaries too), the first argument of a
 * file's own error helper whose first parameter is `id`, and `id: \`a/${x}\`` templates, which must
 * match at least one rendered id.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/rbp.ts';

/** Ids known to be unrendered, each with the reason. Keep it empty. */
const KNOWN_UNRENDERED: Record<string, string> = {};

function files(dir: string, keep: (f: string) => boolean): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(path.join(ROOT, d), { withFileTypes: true })) {
      const rel = `${d}/${e.name}`;
      if (e.isDirectory()) {
        if (e.name !== 'node_modules') walk(rel);
      } else if (keep(rel)) out.push(rel);
    }
  };
  walk(dir);
  return out;
}

const isTest = (f: string) => f.endsWith('.test.ts');
const LITERAL = /'([a-z][\w-]*(?:\/[\w.-]+)+)'/g;

interface Produced {
  ids: Map<string, string>;
  templates: Map<string, string>;
}

/** The ids the code produces, each with the first place it is written. */
export function producedIds(): Produced {
  const ids = new Map<string, string>();
  const templates = new Map<string, string>();
  const sources = [...files('lib', (f) => f.endsWith('.ts') && !isTest(f)), ...files('buildpacks', (f) => /\/src\/.*\.ts$/.test(f) && !isTest(f))];
  for (const file of sources) {
    const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
    const where = (i: number) => `${file}:${text.slice(0, i).split('\n').length}`;
    // id: 'a/b', id: cond ? 'a/b' : 'c/d' (the ternary may go on over lines that start with ? or :)
    for (const m of text.matchAll(/\bid:\s*((?:[^,\n]|\n\s*[?:])*)/g)) {
      for (const l of m[1]!.matchAll(LITERAL)) if (!ids.has(l[1]!)) ids.set(l[1]!, where(m.index));
      const t = /^`([^`]*\$\{[^`]*)`/.exec(m[1]!);
      if (t) templates.set(t[1]!, where(m.index));
    }
    // A helper of this file whose first parameter is the id: outError('platform/out/root', …);
    // flowError('unknown-item', …) when the helper writes id: `request-flow/${id}`.
    const wrap = /\bid:\s*`([\w/-]*)\$\{id\}([\w/-]*)`/.exec(text);
    for (const h of text.matchAll(/(?:function\s+(\w+)|const\s+(\w+)\s*=)\s*\(\s*id\s*:\s*string/g)) {
      const name = h[1] ?? h[2]!;
      for (const c of text.matchAll(new RegExp(String.raw`\b${name}\(\s*'([\w/-]+)'`, 'g'))) {
        const id = wrap ? `${wrap[1]}${c[1]}${wrap[2]}` : c[1]!;
        if (id.includes('/') && !ids.has(id)) ids.set(id, where(c.index));
      }
    }
  }
  // The helpers' own templates are covered by their call sites.
  for (const t of [...templates.keys()]) if (/^[\w/-]*\$\{id\}[\w/-]*$/.test(t)) templates.delete(t);
  return { ids, templates };
}

/** The ids rendered in snapshot files and inline snapshots. */
export function renderedIds(): Set<string> {
  const out = new Set<string>();
  const add = (text: string) => {
    for (const m of text.matchAll(/\(error id: ([^)\s]+)\)/g)) out.add(m[1]!);
  };
  for (const dir of ['test', 'lib', 'buildpacks'])
    for (const f of files(dir, (f) => f.includes('/__snapshots__/') && f.endsWith('.snap'))) add(fs.readFileSync(path.join(ROOT, f), 'utf8'));
  for (const f of [
    ...files('test', (f) => f.endsWith('.test.ts')),
    ...files('lib', (f) => f.endsWith('.test.ts')),
    ...files('buildpacks', (f) => f.endsWith('.test.ts')),
  ]) {
    const text = fs.readFileSync(path.join(ROOT, f), 'utf8');
    for (const m of text.matchAll(/toMatchInlineSnapshot\(\s*`([^`]*)`/g)) add(m[1]!);
    for (const m of text.matchAll(/toThrowErrorMatchingInlineSnapshot\(\s*`([^`]*)`/g)) add(m[1]!);
  }
  return out;
}

const templateRe = (t: string) =>
  new RegExp(
    `^${t
      .split(/\$\{[^}]*\}/)
      .map((p) => p.replace(/[.*+?^$()|[\]\\]/g, '\\$&'))
      .join('[\\w.-]+')}$`,
  );

describe('error ids', () => {
  const { ids, templates } = producedIds();
  const rendered = renderedIds();

  it('finds the ids the code writes, in each way it writes them', () => {
    expect(ids.get('platform/out/root')).toMatch(/^lib\/platform\/out-paths\.ts:/);
    expect(ids.has('static/generator/failed') && ids.has('static/build-command/failed')).toBe(true);
    expect(ids.has('request-flow/unknown-item')).toBe(true);
    expect([...templates.keys()]).toContain('config/${name}/invalid');
    expect(ids.size).toBeGreaterThan(100);
  });

  it('every id the code produces is rendered in a snapshot', () => {
    // An id given to appPathError is a prefix: the problem follows (request-flow/cache/file/outside).
    const isRendered = (id: string) => rendered.has(id) || [...rendered].some((r) => r.startsWith(`${id}/`));
    const missing = [...ids].filter(([id]) => !isRendered(id) && !(id in KNOWN_UNRENDERED)).map(([id, at]) => `${id} (${at})`);
    const unmatched = [...templates]
      .filter(([t]) => !(t in KNOWN_UNRENDERED) && ![...rendered].some((r) => templateRe(t).test(r)))
      .map(([t, at]) => `${t} (${at})`);
    expect([...missing, ...unmatched], 'render these in a snapshot test (test/helpers/user-error.ts), or remove them').toEqual([]);
  });

  it('every rendered id is still produced by the code', () => {
    const dead = [...rendered].filter(
      (r) => !ids.has(r) && ![...ids.keys()].some((id) => r.startsWith(`${id}/`)) && ![...templates.keys()].some((t) => templateRe(t).test(r)),
    );
    expect(dead, 'these snapshots render errors the code no longer has').toEqual([]);
  });

  it('the list of known unrendered ids names only ids that exist and are unrendered', () => {
    for (const id of Object.keys(KNOWN_UNRENDERED)) {
      expect(ids.has(id) || templates.has(id), id).toBe(true);
      expect(rendered.has(id), id).toBe(false);
    }
  });
});
