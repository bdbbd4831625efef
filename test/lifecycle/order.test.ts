/**
 * Composite (meta) buildpacks: the order expansion of the reference lifecycle (unit test on the
 * lifecycle's own fixture), then `rbp detect|build` with composites of the scripted fixture
 * buildpacks (fixtures/buildpacks/composite-*): groups, optional components, nesting, the platform
 * layout, `--order` entries naming composites, and the errors for a missing component or a cycle.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import type { BuildpackRef } from '../../lib/cnb/descriptor.ts';
import { orderTrials } from '../../lib/platform/expand.ts';
import type { GroupEntry, Order } from '../../lib/platform/order.ts';
import { ROOT, rbp, tmpDir } from '../helpers/rbp.ts';
import { bp, launchToml, passWith, scriptedApp } from './helpers.ts';

/** Every flat group the lifecycle would try when none passes. */
function expandOrder(order: Order): GroupEntry[][] {
  const out: GroupEntry[][] = [];
  const trials = orderTrials(order);
  for (let step = trials.next(); !step.done; step = trials.next('fail')) out.push(step.value);
  return out;
}

describe('order expansion (buildpacks/lifecycle phase/detector_test.go)', () => {
  const ref = (id: string, version: string): BuildpackRef => ({ dir: `/bp/${id}/${version}`, descriptor: { api: '0.10', buildpack: { id, version } } });
  const el = (id: string, version: string, optional = false): GroupEntry => ({ ref: ref(id, version), optional });
  const composite = (id: string, order: GroupEntry[][], optional = false): GroupEntry => ({ ...el(id, 'v1', optional), order });
  const keys = (group: GroupEntry[]) => group.map((e) => `${e.ref.descriptor.buildpack.id}@${e.ref.descriptor.buildpack.version}`);

  // E = [A, F, B]; F = [C] | [G?] | [D]; G = [A@v2, B@v2] | [C@v2, D@v2]
  const G = (optional: boolean) =>
    composite(
      'G',
      [
        [el('A', 'v2'), el('B', 'v2')],
        [el('C', 'v2'), el('D', 'v2')],
      ],
      optional,
    );
  const F = composite('F', [[el('C', 'v1')], [G(true)], [el('D', 'v1')]]);
  const E = composite('E', [[el('A', 'v1'), F, el('B', 'v1')]]);
  const expected = [
    ['A@v1', 'C@v1', 'B@v1'],
    ['A@v1', 'B@v2'], // A@v2 skipped: id A is already in the group; B@v1 skipped behind B@v2
    ['A@v1', 'C@v2', 'D@v2', 'B@v1'],
    ['A@v1', 'B@v1'], // G is optional: the group once more without it
    ['A@v1', 'D@v1', 'B@v1'],
  ];

  it('"expands order-containing buildpack IDs": depth first, left to right, optional, ids once', () => {
    expect(expandOrder([[E]]).map(keys)).toEqual(expected);
  });

  it('"selects the first passing group": nothing after it is tried', () => {
    const trials = orderTrials([[E]]);
    const tried: string[][] = [];
    let step = trials.next();
    while (!step.done) {
      tried.push(keys(step.value));
      step = trials.next(tried.length === 4 ? 'pass' : 'fail');
    }
    expect(tried).toEqual(expected.slice(0, 4));
    expect(step.value).toBe('pass');
  });

  it('a required composite is not dropped; an error in any group makes the order an error', () => {
    const required = composite('F', [[el('C', 'v1')], [G(false)], [el('D', 'v1')]]);
    expect(expandOrder([[el('A', 'v1'), required, el('B', 'v1')]]).map(keys)).toEqual(expected.filter((g) => g.join() !== 'A@v1,B@v1'));
    const trials = orderTrials([[el('A', 'v1')], [el('B', 'v1')]]);
    trials.next();
    trials.next('error');
    expect(trials.next('fail')).toEqual({ done: true, value: 'error' });
  });

  it('groups of the outer order follow the composite; a plain order is tried as written', () => {
    const order = [[el('X', 'v1'), composite('P', [[el('Y', 'v1')], [el('Z', 'v1', true)]])], [el('W', 'v1')]];
    expect(expandOrder(order).map(keys)).toEqual([['X@v1', 'Y@v1'], ['X@v1', 'Z@v1'], ['W@v1']]);
    expect(expandOrder(order).at(1)?.[1]?.optional).toBe(true);
  });
});

const composite = (name: string) => ['--buildpack', bp(`composite-${name}`)];
/** The `- try #n: ...` lines: which flat groups detection tried, in order. */
const tries = (stdout: string) => [...stdout.matchAll(/^- try #\d+: (.*)$/gm)].map((m) => m[1]);

describe('rbp detect with composite buildpacks', () => {
  it('a composite of two components: both pass, the group is its components', async () => {
    const app = scriptedApp({ 'a/detect': passWith(), 'b/detect': passWith() });
    const r = await rbp(['detect', app, ...composite('ab')]);
    expect(r.exitCode).toBe(0);
    expect(tries(r.stdout)).toEqual(['test/a@0.0.1, test/b@0.0.1']);
    expect(r.stdout).toMatch(/^- group: test\/a@0.0.1, test\/b@0.0.1$/m);
  });

  it('a composite with two groups: the first fails, the second passes', async () => {
    const app = scriptedApp({ 'a/detect': passWith(), 'b/detect': 'echo "no b here"; exit 100', 'c/detect': passWith() });
    const r = await rbp(['detect', app, ...composite('groups')]);
    expect(r.exitCode).toBe(0);
    expect(tries(r.stdout)).toEqual(['test/a@0.0.1, test/b@0.0.1', 'test/c@0.0.1']);
    expect(r.stdout).toContain('- fail: test/b@0.0.1: no b here');
    expect(r.stdout).toMatch(/^- group: test\/c@0.0.1$/m);
  });

  it('every group of the composite fails: 20, and 21 when a required component errored', async () => {
    const failing = await rbp(['detect', scriptedApp({ 'a/detect': passWith() }), ...composite('groups')]);
    expect(failing.exitCode).toBe(20);
    expect(failing.stderr).toContain('ERROR: no buildpack group passed detection');
    const erroring = await rbp(['detect', scriptedApp({ 'a/detect': passWith(), 'b/detect': 'exit 7' }), ...composite('groups')]);
    expect(erroring.exitCode).toBe(21);
    expect(erroring.stdout).toContain('- err:  test/b@0.0.1 (exit 7)');
  });

  it('an optional component that fails detection is left out', async () => {
    const app = scriptedApp({ 'a/detect': passWith(), 'b/detect': 'exit 100', 'c/detect': passWith() });
    const r = await rbp(['detect', app, ...composite('optional')]);
    expect(r.exitCode).toBe(0);
    expect(tries(r.stdout)).toEqual(['test/a@0.0.1, test/b@0.0.1 (optional), test/c@0.0.1']);
    expect(r.stdout).toContain('- skip: test/b@0.0.1');
    expect(r.stdout).toMatch(/^- group: test\/a@0.0.1, test\/c@0.0.1$/m);
  });

  it('nested composites: the inner groups in turn, then without the optional inner composite; each detect runs once', async () => {
    const counts = tmpDir('rbp-runs-');
    const count = (name: string) => `echo run >> "${counts}/${name}-runs"`;
    const scripts = { 'd/detect': `${count('d')}\n${passWith()}`, 'a/detect': passWith(), 'b/detect': 'exit 100', 'c/detect': 'exit 100' };
    const app = scriptedApp(scripts);
    const r = await rbp(['detect', app, ...composite('nested')]);
    expect(r.exitCode).toBe(0);
    expect(tries(r.stdout)).toEqual(['test/d@0.0.1, test/a@0.0.1, test/b@0.0.1', 'test/d@0.0.1, test/c@0.0.1', 'test/d@0.0.1']);
    expect(r.stdout).toMatch(/^- group: test\/d@0.0.1$/m);
    expect(fs.readFileSync(path.join(counts, 'd-runs'), 'utf8')).toBe('run\n');

    const inner = await rbp(['detect', scriptedApp({ ...scripts, 'c/detect': passWith() }), ...composite('nested')]);
    expect(tries(inner.stdout)).toHaveLength(2);
    expect(inner.stdout).toMatch(/^- group: test\/d@0.0.1, test\/c@0.0.1$/m);
  });

  it('a component given again with --buildpack is not run twice: its id is already in the group', async () => {
    const app = scriptedApp({ 'a/detect': passWith(), 'b/detect': passWith() });
    const r = await rbp(['detect', app, ...composite('ab'), '--buildpack', bp('b')]);
    expect(tries(r.stdout)).toEqual(['test/a@0.0.1, test/b@0.0.1']);
    expect(r.stdout).toMatch(/^- group: test\/a@0.0.1, test\/b@0.0.1$/m);
  });

  it('a composite in the platform layout finds its components in the same root', async () => {
    const app = scriptedApp({ 'e/detect': passWith('[[provides]]\nname = "x"'), 'f/detect': passWith('[[requires]]\nname = "x"') });
    const r = await rbp(['detect', app, '--buildpack', path.join(bp('composite-layout'), 'test_layout-meta', '1.0.0')]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^- group: test\/e@0.0.1, test\/f@0.0.1$/m);
    expect(r.stdout).toContain('plan: x ← test/e');
  });

  it('our own buildpacks can be components', async () => {
    const version = (parse(fs.readFileSync(path.join(ROOT, 'dist', 'buildpacks', 'static', 'buildpack.toml'), 'utf8')) as { buildpack: { version: string } })
      .buildpack.version;
    const dir = path.join(tmpDir('rbp-composite-'), 'meta');
    fs.mkdirSync(dir);
    fs.writeFileSync(
      path.join(dir, 'buildpack.toml'),
      `api = "0.10"\n[buildpack]\nid = "test/with-static"\nversion = "1.0.0"\n[[order]]\n[[order.group]]\nid = "rbp/static"\nversion = "${version}"\n`,
    );
    const r = await rbp(['detect', scriptedApp({}, { 'index.html': '<h1>hi</h1>' }), '--buildpack', dir]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`^- group: rbp/static@${version.replaceAll('.', '\\.')}$`, 'm'));
  });
});

describe('--order entries naming composites', () => {
  const orderFile = (dir: string, group: string) => {
    fs.writeFileSync(path.join(dir, 'order.toml'), `[[order]]\n${group}\n[[order]]\n[[order.group]]\npath = "${bp('d')}"\n`);
    return path.join(dir, 'order.toml');
  };

  it('by path: the composite is expanded, then the next group of the order', async () => {
    const file = orderFile(tmpDir('rbp-order-'), `[[order.group]]\npath = "${bp('composite-groups')}"`);
    const app = scriptedApp({ 'a/detect': 'exit 100', 'c/detect': 'exit 100', 'd/detect': passWith() });
    const r = await rbp(['detect', app, '--order', file]);
    expect(r.exitCode).toBe(0);
    expect(tries(r.stdout)).toEqual(['test/a@0.0.1, test/b@0.0.1', 'test/c@0.0.1', 'test/d@0.0.1']);
    expect(r.stdout).toMatch(/^- group: test\/d@0.0.1$/m);
  });

  it('by id: among the --buildpack directories, or in the platform layout beside the order file', async () => {
    const app = scriptedApp({ 'a/detect': passWith(), 'b/detect': passWith(), 'e/detect': passWith(), 'f/detect': passWith() });
    const byDir = orderFile(tmpDir('rbp-order-'), '[[order.group]]\nid = "test/composite-ab"\nversion = "1.0.0"');
    const r = await rbp(['detect', app, '--order', byDir, ...composite('ab')]);
    expect(r.stdout).toMatch(/^- group: test\/a@0.0.1, test\/b@0.0.1$/m);

    const root = tmpDir('rbp-layout-');
    fs.cpSync(bp('composite-layout'), root, { recursive: true });
    const byLayout = orderFile(root, '[[order.group]]\nid = "test/layout-meta"\nversion = "1.0.0"');
    const r2 = await rbp(['detect', app, '--order', byLayout]);
    expect(r2.exitCode).toBe(0);
    expect(r2.stdout).toMatch(/^- group: test\/e@0.0.1, test\/f@0.0.1$/m);
  });
});

describe('composite errors', () => {
  /** Rendered error with this checkout's path replaced, so the snapshot holds anywhere. */
  const portable = (text: string) => text.replaceAll(ROOT, '<repo>');

  it('a component found nowhere: one error naming it and every place looked, before any detect', async () => {
    const app = scriptedApp({ 'a/detect': 'echo ran > "$PWD/../a-ran"; exit 0' });
    const r = await rbp(['detect', app, ...composite('missing')]);
    expect(r.exitCode).toBe(2);
    expect(fs.existsSync(path.join(app, '..', 'a-ran'))).toBe(false);
    expect(r.all).not.toMatch(/\n\s+at /); // no stack trace
    expect(portable(r.stderr)).toMatchInlineSnapshot(`
      "! ERROR Component buildpack test/nowhere@9.9.9 of composite test/composite-missing@1.0.0 not found
      !
      ! Seen: [[order.group]] id = "test/nowhere", version = "9.9.9" (<repo>/fixtures/buildpacks/composite-missing/buildpack.toml)
      ! Rule: A composite buildpack names its components by id and version; rbp looks for each in:
      !   --buildpack <repo>/fixtures/buildpacks/composite-missing
      !   <repo>/fixtures/buildpacks/test_nowhere/9.9.9
      !   <repo>/fixtures/buildpacks/test_nowhere
      !   <repo>/fixtures/buildpacks/*/
      !   our buildpacks in <repo>/dist/buildpacks
      ! Fix:  Give test/nowhere@9.9.9 with --buildpack DIR, or put it beside the composite, at <repo>/fixtures/buildpacks/test_nowhere/9.9.9.
      ! (error id: platform/buildpack/component-not-found)"
    `);
  });

  it('a component found only in another version: the error says where that version is', async () => {
    const dir = path.join(tmpDir('rbp-composite-'), 'meta');
    fs.mkdirSync(dir);
    fs.writeFileSync(
      path.join(dir, 'buildpack.toml'),
      'api = "0.10"\n[buildpack]\nid = "test/meta"\nversion = "1.0.0"\n[[order]]\n[[order.group]]\nid = "test/a"\nversion = "9.9.9"\n',
    );
    const r = await rbp(['detect', scriptedApp({}), '--buildpack', dir, '--buildpack', bp('a')]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('! ERROR Component buildpack test/a@9.9.9 of composite test/meta@1.0.0 not found');
    expect(r.stderr).toContain(`!   (test/a@0.0.1 is at ${bp('a')}: another version)`);
  });

  it('an order entry naming an unknown id is the same kind of error', async () => {
    const dir = tmpDir('rbp-order-');
    fs.writeFileSync(path.join(dir, 'order.toml'), '[[order]]\n[[order.group]]\nid = "test/unknown"\nversion = "1.0.0"\n');
    const r = await rbp(['detect', scriptedApp({}), '--order', path.join(dir, 'order.toml')]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('! ERROR Buildpack test/unknown@1.0.0 of the order not found');
    expect(r.stderr).toContain(`!   ${path.join(dir, 'test_unknown', '1.0.0')}`);
    expect(r.stderr).toContain('(error id: platform/order/not-found)');
  });

  it('a composite that contains itself is an error, not endless recursion', async () => {
    const r = await rbp(['detect', scriptedApp({}), ...composite('cycle')]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain('! ERROR Composite buildpack test/composite-cycle@1.0.0 contains itself');
    expect(r.stderr).toContain('(error id: platform/buildpack/order-cycle)');
  });
});

describe('rbp build with a composite buildpack', () => {
  it('builds the components of the passing group; their processes are merged into metadata.toml', async () => {
    const app = scriptedApp({
      'a/detect': passWith(),
      'b/detect': passWith(),
      'a/build': launchToml('[[processes]]\ntype = "web"\ncommand = ["echo", "web"]\ndefault = true'),
      'b/build': launchToml('[[processes]]\ntype = "worker"\ncommand = ["echo", "worker"]'),
    });
    const out = path.join(tmpDir('rbp-out-'), 'out');
    const r = await rbp(['build', app, '--out', out, ...composite('ab')]);
    expect(r.exitCode).toBe(0);
    const md = parse(fs.readFileSync(path.join(out, 'layers', 'config', 'metadata.toml'), 'utf8')) as {
      buildpacks: { id: string }[];
      processes: { type: string; command: string[]; 'buildpack-id': string }[];
    };
    expect(md.buildpacks.map((b) => b.id)).toEqual(['test/a', 'test/b']);
    expect(md.processes.map((p) => [p.type, p['buildpack-id'], p.command.join(' ')])).toEqual([
      ['web', 'test/a', 'echo web'],
      ['worker', 'test/b', 'echo worker'],
    ]);
  });
});
