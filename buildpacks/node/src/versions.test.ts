import { describe, expect, it } from 'vitest';
import { renderUserError, type UserError } from '../../../lib/errors.ts';
import { denoFromMise } from './mise.ts';
import { endOfLife, nodeConstraint } from '../../../lib/js-project/node-version.ts';
import { bundledNpmVersion } from '../../../lib/js-project/npm-version.ts';
import { readPackageJson, startMethod } from './package-json.ts';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

function dirWith(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-node-'));
  for (const [f, c] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), c);
  return dir;
}

describe('nodeConstraint (contract, node rule 6)', () => {
  it('engines.node wins over CC_NODE_VERSION', () => {
    expect(nodeConstraint({ engines: { node: '>=22 <23' } }, { CC_NODE_VERSION: '20' })).toMatchObject({
      constraint: '>=22 <23',
      source: 'engines.node',
      ignored: '20',
    });
  });
  it('CC_NODE_VERSION alone, else the latest LTS 24.15.0', () => {
    expect(nodeConstraint({}, { CC_NODE_VERSION: '22.12' })).toMatchObject({ constraint: '22.12', source: 'CC_NODE_VERSION' });
    expect(nodeConstraint({}, {})).toMatchObject({ constraint: '24.15.0', source: 'default' });
  });
  it('refuses a CC_NODE_VERSION that is not major[.minor[.patch]]', () => {
    let text = '';
    try {
      nodeConstraint({}, { CC_NODE_VERSION: '^22' });
    } catch (e) {
      text = renderUserError((e as UserError).data);
    }
    expect(text).toMatchInlineSnapshot(`
      "! ERROR Invalid CC_NODE_VERSION
      !
      ! Seen: CC_NODE_VERSION: "^22" (the application environment)
      ! Rule: CC_NODE_VERSION is <major>, <major>.<minor> or <major>.<minor>.<patch>, e.g. 24, 24.15 or 24.15.0 (contract, node rule 6).
      ! Fix:  Set CC_NODE_VERSION to a version such as 24, or use a semver range in engines.node of package.json.
      ! (error id: config/CC_NODE_VERSION/invalid)"
    `);
  });
  it('knows end-of-life lines', () => {
    expect(endOfLife('20.19.0', new Date('2026-11-22'))).toEqual({ eol: true, end: '2026-04-30' });
    expect(endOfLife('24.15.0', new Date('2026-11-22'))).toEqual({ eol: false, end: '2028-04-30' });
  });
});

describe('bundledNpmVersion', () => {
  const doc = {
    versions: { '10.8.2': { engines: { node: '^18.17.0 || >=20.5.0' } }, '10.9.0': {}, '11.12.1': {}, '11.13.0': {}, '11.14.0': { engines: { node: '>=99' } } },
    time: { '10.8.2': '2024-07-01', '10.9.0': '2024-10-01', '11.12.1': '2026-03-26', '11.13.0': '2026-04-22', '11.14.0': '2026-05-06' },
  };
  it('pins the contract default: Node.js 24.15.0 ships npm 11.12.1', () => {
    expect(bundledNpmVersion('24.15.0', doc)).toBe('11.12.1');
  });
  it('takes the newest npm of the line that Node major bundles, published before the release', () => {
    expect(bundledNpmVersion('20.18.0', doc, new Date('2024-09-01'))).toBe('10.8.2');
    expect(bundledNpmVersion('24.16.0', doc, new Date('2026-05-01'))).toBe('11.13.0');
    expect(bundledNpmVersion('24.20.0', doc, new Date('2026-09-01'))).toBe('11.13.0'); // 11.14.0 refuses this Node
  });
});

describe('package.json', () => {
  it('renders a parse error without a stack', () => {
    let text = '';
    try {
      readPackageJson(dirWith({ 'package.json': '{ "name": ' }));
    } catch (e) {
      text = renderUserError((e as UserError).data);
    }
    expect(text).toContain('! ERROR package.json cannot be used');
    expect(text).toContain('(error id: node/package-json/parse)');
  });
  it('refuses a main that is not a string', () => {
    expect(() => readPackageJson(dirWith({ 'package.json': '{ "main": 3 }' }))).toThrow(/package.json cannot be used/);
  });
  it('start method: CC_RUN_COMMAND > scripts.start > main', () => {
    expect(startMethod({ main: 'a.js', scripts: { start: 'b' } }, { CC_RUN_COMMAND: 'c' })).toEqual({ kind: 'run-command', command: 'c' });
    expect(startMethod({ main: 'a.js', scripts: { start: 'b' } }, {})).toEqual({ kind: 'start-script', command: 'b' });
    expect(startMethod({ main: 'a.js' }, {})).toEqual({ kind: 'main', file: 'a.js' });
    expect(startMethod({ scripts: { build: 'x' } }, {})).toBeUndefined();
  });
});

describe('mise.toml', () => {
  it('reads [tools] deno', () => {
    expect(denoFromMise(dirWith({ 'mise.toml': '[tools]\ndeno = "latest"\n' }))).toEqual({ constraint: 'latest', file: 'mise.toml' });
    expect(denoFromMise(dirWith({ 'mise.toml': '[tools]\nnode = "22"\n' }))).toBeUndefined();
    expect(denoFromMise(dirWith({}))).toBeUndefined();
  });
});
