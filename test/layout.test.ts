/**
 * The house (README, "Layout"): each room of lib/ and buildpacks/ imports only the rooms below it,
 * and no module imports itself back through others. A change that needs an upward import puts the
 * shared part in the lower room instead.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './helpers/rbp.ts';

/** The modules of the shared layer: small files every room may use. */
const BASE = [
  'lib/errors.ts',
  'lib/config',
  'lib/log.ts',
  'lib/mask.ts',
  'lib/fsx.ts',
  'lib/disk.ts',
  'lib/app-path.ts',
  'lib/pid.ts',
  'lib/suggest.ts',
  'lib/json-depth.ts',
  'lib/memory-temp.ts',
  'lib/run-step.ts',
  'lib/child-result.ts',
  'lib/tree-digest.ts',
  'lib/types',
];

/** Each room and the rooms it may import (besides itself and the base). */
const ROOMS: Record<string, string[]> = {
  base: [],
  'lib/cnb': [],
  'lib/deps': ['lib/cnb'],
  'lib/js-project': ['lib/cnb', 'lib/deps'],
  'lib/launch': ['lib/cnb', 'lib/deps'],
  // rbp: the images it writes and our buildpacks (package), below its CLI and lifecycle (platform).
  'lib/package': ['lib/cnb', 'lib/deps', 'lib/launch'],
  'lib/platform': ['lib/cnb', 'lib/deps', 'lib/launch', 'lib/package'],
  'buildpacks/node': ['lib/cnb', 'lib/deps', 'lib/js-project', 'lib/launch'],
  'buildpacks/static': ['lib/cnb', 'lib/deps', 'lib/js-project', 'lib/launch'],
  'buildpacks/phpserver': ['lib/cnb', 'lib/deps', 'lib/launch'],
};

function roomOf(file: string): string {
  if (BASE.some((b) => file === b || file.startsWith(`${b}/`))) return 'base';
  const parts = file.split('/');
  const room = `${parts[0]}/${parts[1]}`;
  if (!(room in ROOMS)) throw new Error(`${file}: in no room of test/layout.test.ts (add it to BASE or ROOMS, and to the README's Layout)`);
  return room;
}

interface Edge {
  to: string;
  typeOnly: boolean;
}

/** Every module of lib/ and buildpacks/ (tests aside) and what it imports, relative to the root. */
function graph(): Map<string, Edge[]> {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(rel);
      else if (e.name.endsWith('.ts') && !e.name.endsWith('.test.ts')) files.push(rel);
    }
  };
  walk('lib');
  walk('buildpacks');
  const g = new Map<string, Edge[]>();
  for (const f of files) {
    const src = fs.readFileSync(path.join(ROOT, f), 'utf8');
    const edges = [...src.matchAll(/^\s*(import|export)(\s+type)?\s[^'"]*?\sfrom\s+'(\.[^']+)'/gm)].map((m) => ({
      to: path.posix.normalize(path.posix.join(path.posix.dirname(f), m[3]!)),
      typeOnly: Boolean(m[2]),
    }));
    g.set(f, edges);
  }
  return g;
}

/** The strongly connected groups of more than one module (Tarjan). */
function cycles(g: Map<string, Edge[]>, withTypes: boolean): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const found: string[][] = [];
  let i = 0;
  const visit = (v: string) => {
    index.set(v, i);
    low.set(v, i++);
    stack.push(v);
    on.add(v);
    for (const e of g.get(v) ?? []) {
      if ((!withTypes && e.typeOnly) || !g.has(e.to)) continue;
      if (!index.has(e.to)) {
        visit(e.to);
        low.set(v, Math.min(low.get(v)!, low.get(e.to)!));
      } else if (on.has(e.to)) low.set(v, Math.min(low.get(v)!, index.get(e.to)!));
    }
    if (low.get(v) === index.get(v)) {
      const group: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        group.push(w);
      } while (w !== v);
      if (group.length > 1) found.push(group.sort());
    }
  };
  for (const v of g.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('the house', () => {
  const g = graph();

  it('has no import cycle, type imports included', () => {
    expect(cycles(g, true)).toEqual([]);
  });

  it('every import stays in its room or goes down to one the room may use', () => {
    const upward: string[] = [];
    for (const [from, edges] of g) {
      const room = roomOf(from);
      for (const { to } of edges) {
        const target = roomOf(to);
        if (target !== room && target !== 'base' && !ROOMS[room]!.includes(target)) upward.push(`${from} -> ${to} (${room} may not import ${target})`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('test support lives under test/, not beside the code it tests', () => {
    const support = [...g.keys()].filter((f) => /support|fixture|mock/i.test(path.basename(f)) || (g.get(f) ?? []).some((e) => e.to.startsWith('test/')));
    expect(support).toEqual([]);
  });
});
