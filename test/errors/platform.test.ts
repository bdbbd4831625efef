/**
 * What rbp says when its own input is wrong (flags, OUT and the cache, the order, project.toml,
 * the env files): each user error rendered once, as a user reads it. Run in-process through the
 * CLI's main() or the function that decides, with no build: the error comes before any work.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { parseRenderedError, renderUserError, type UserError } from '../../lib/errors.ts';
import { checkBuilderTools } from '../../lib/package/builder.ts';
import { crashedError, healthCheckError, notListeningError } from '../../lib/platform/deploy.ts';
import { failureError } from '../../lib/platform/failure.ts';
import { parseMemory } from '../../lib/launch/instance.ts';
import { restartPolicy } from '../../lib/launch/restart.ts';
import { writeAppImage } from '../../lib/package/app-image.ts';
import { openBuildpackage } from '../../lib/package/buildpackage.ts';
import { Logger } from '../../lib/log.ts';
import { main } from '../../lib/platform/cli.ts';
import { parseEnvAssignment, parseEnvFile } from '../../lib/platform/cli-env.ts';
import { loadBuildpackDir, loadBuildpackRef, orderFromFile, orderFromGroups, parseType, resolveOrder } from '../../lib/platform/order.ts';
import { ourBuildpack } from '../../lib/package/our-buildpacks.ts';
import { OutTransaction } from '../../lib/platform/out-transaction.ts';
import { readProjectDescriptor } from '../../lib/platform/project-descriptor.ts';
import { planLaunch } from '../../lib/platform/launcher.ts';
import { stableRendering, rejectedUserError, thrownUserError } from '../helpers/user-error.ts';
import { execa } from 'execa';
import { FIXTURES, RBP, tmpDir } from '../helpers/rbp.ts';

/** rbp's stderr for `argv`, run in-process: the rendered user error block only. */
async function cliError(argv: string[]): Promise<{ id: string; text: string }> {
  let err = '';
  const sink = (f: (s: string) => void) =>
    new Writable({
      write: (c, _e, cb) => {
        f(String(c));
        cb();
      },
    });
  const code = await main(argv, { stdout: sink(() => undefined), stderr: sink((s) => (err += s)) });
  expect(code, err).not.toBe(0);
  // eslint-disable-next-line no-control-regex
  const lines = err.replace(/\x1b\[[0-9;]*m/g, '').split('\n');
  const start = lines.findIndex((l) => l.startsWith('! ERROR'));
  const end = lines.findIndex((l, i) => i > start && l.startsWith('! (error id:'));
  expect(start, err).toBeGreaterThan(-1);
  const text = lines.slice(start, end + 1).join('\n');
  return { id: /error id: ([^)]+)/.exec(text)![1]!, text };
}

function stable(e: UserError, dirs: Record<string, string> = {}): string {
  return stableRendering(e, dirs);
}

describe('rbp flags', () => {
  it.each([
    ['platform/usage', ['build', '/nonexistent-app']],
    ['platform/command/unknown', ['biuld']],
    ['platform/flag/unknown', ['deploy', '/nonexistent-app', '--chek']],
    ['platform/flag/missing-value', ['build', '/nonexistent-app', '--out', '--json']],
    ['platform/flag/unexpected-value', ['deploy', '/nonexistent-app', '--check=yes']],
    ['platform/flag/repeated', ['build', '/nonexistent-app', '--out', 'a', '-o', 'b']],
    ['platform/tag/no-image', ['build', '/nonexistent-app', '--out', '/nonexistent-out', '-t', 'node']],
    ['platform/tag/invalid', ['build', '/nonexistent-app', '--out', '/nonexistent-out', '--image', '/nonexistent-image', '--tag', 'my app']],
    ['platform/port/invalid', ['run', '/nonexistent-out', '--port', 'eighty']],
    ['platform/timeout/invalid', ['deploy', '/nonexistent-app', '--timeout', '0']],
  ])('%s', async (id, argv) => {
    const r = await cliError(argv);
    expect(r.id).toBe(id);
    expect(r.text).toMatchSnapshot();
  });

  it('platform/memory/invalid', () => {
    expect(stable(thrownUserError(() => parseMemory('lots')))).toMatchSnapshot();
  });

  it('launch/restart/invalid', () => {
    expect(stable(thrownUserError(() => restartPolicy('always')))).toMatchSnapshot();
  });

  it('platform/env/unset', () => {
    const e = thrownUserError(() => parseEnvAssignment('RBP_TEST_NOT_SET_ANYWHERE', '--env', {}));
    expect(e.id).toBe('platform/env/unset');
    expect(stable(e)).toMatchSnapshot();
  });

  it('platform/env-file/not-found and platform/env-file/invalid-line', () => {
    const dir = tmpDir('rbp-envfile-');
    const missing = thrownUserError(() => parseEnvFile(path.join(dir, 'nope.env')));
    expect(missing.id).toBe('platform/env-file/not-found');
    expect(stable(missing, { [dir]: '<dir>' })).toMatchSnapshot();
    fs.writeFileSync(path.join(dir, 'bad.env'), 'A=1\nthis is not an assignment\n');
    const bad = thrownUserError(() => parseEnvFile(path.join(dir, 'bad.env')));
    expect(bad.id).toBe('platform/env-file/invalid-line');
    expect(stable(bad, { [dir]: '<dir>' })).toMatchSnapshot();
  });
});

describe('rbp build: the application, OUT and the cache', () => {
  it('platform/app/not-found', async () => {
    const out = path.join(tmpDir('rbp-out-'), 'out');
    const r = await cliError(['build', '/nonexistent-app', '--out', out, '--buildpack', path.join(FIXTURES, 'buildpacks', 'node-server')]);
    expect(r.id).toBe('platform/app/not-found');
    expect(r.text).toMatchSnapshot();
  });

  it('platform/binding/invalid', async () => {
    const dir = tmpDir('rbp-binding-');
    fs.mkdirSync(path.join(dir, 'app'));
    fs.mkdirSync(path.join(dir, 'creds'));
    const r = await cliError([
      'build',
      path.join(dir, 'app'),
      '--out',
      path.join(dir, 'out'),
      '--buildpack',
      path.join(FIXTURES, 'buildpacks', 'node-server'),
      '--binding',
      path.join(dir, 'creds'),
    ]);
    expect(r.id).toBe('platform/binding/invalid');
    expect(r.text.replaceAll(dir, '<dir>')).toMatchSnapshot();
  });

  const paths = () => {
    const dir = tmpDir('rbp-tx-');
    const app = path.join(dir, 'app');
    fs.mkdirSync(app);
    return { dir, app };
  };
  const tx =
    (appDir: string, outDir: string, cacheDir = `${outDir}.rbp-cache`, explicitCache = false) =>
    () =>
      new OutTransaction({ appDir, outDir, cacheDir, explicitCache });

  it.each([
    ['platform/out/root', (d: { dir: string; app: string }) => tx(d.app, '/')],
    ['platform/out/inside-app', (d: { dir: string; app: string }) => tx(d.app, path.join(d.app, 'out'))],
    ['platform/out/contains-app', (d: { dir: string; app: string }) => tx(d.app, d.dir)],
    [
      'platform/out/not-rbp',
      (d: { dir: string; app: string }) => (
        fs.mkdirSync(path.join(d.dir, 'mine')),
        fs.writeFileSync(path.join(d.dir, 'mine', 'notes.txt'), 'x'),
        tx(d.app, path.join(d.dir, 'mine'))
      ),
    ],
    ['platform/cache/root', (d: { dir: string; app: string }) => tx(d.app, path.join(d.dir, 'out'), '/', true)],
    ['platform/cache/overlaps-out', (d: { dir: string; app: string }) => tx(d.app, path.join(d.dir, 'out'), path.join(d.dir, 'out', 'cache'), true)],
    ['platform/cache/contains-app', (d: { dir: string; app: string }) => tx(d.app, path.join(tmpDir('rbp-tx-out-'), 'out'), d.dir, true)],
    [
      'platform/cache/not-rbp',
      (d: { dir: string; app: string }) => (
        fs.mkdirSync(path.join(d.dir, 'c')),
        fs.writeFileSync(path.join(d.dir, 'c', 'notes.txt'), 'x'),
        tx(d.app, path.join(d.dir, 'out'), path.join(d.dir, 'c'), true)
      ),
    ],
    [
      'platform/out/locked',
      (d: { dir: string; app: string }) => (fs.writeFileSync(path.join(d.dir, 'out.rbp-lock'), `${process.ppid}\n`), tx(d.app, path.join(d.dir, 'out'))),
    ],
    [
      'platform/out/unusable',
      (d: { dir: string; app: string }) => (fs.writeFileSync(path.join(d.dir, 'file'), ''), tx(d.app, path.join(d.dir, 'file', 'out'))),
    ],
  ])('%s', (id, make) => {
    const d = paths();
    const e = thrownUserError(make(d));
    expect(e.id).toBe(id);
    expect(stable(e, { [`process ${process.ppid}`]: 'process <pid>', [d.dir]: '<dir>' })).toMatchSnapshot();
  });

  it('platform/out/previous-left', () => {
    const d = paths();
    const out = path.join(d.dir, 'out');
    const t = new OutTransaction({ appDir: d.app, outDir: out, cacheDir: `${out}.rbp-cache`, explicitCache: false });
    try {
      // Both an OUT that rbp did not mark and a previous OUT: neither is thrown away.
      fs.mkdirSync(out);
      fs.writeFileSync(path.join(out, 'notes.txt'), '');
      fs.mkdirSync(`${out}.rbp-previous`);
      const e = thrownUserError(() => t.begin());
      expect(e.id).toBe('platform/out/previous-left');
      expect(stable(e, { [d.dir]: '<dir>' })).toMatchSnapshot();
    } finally {
      t.release();
    }
  });

  it('platform/out/name-too-long', () => {
    // A name whose lock file still fits in a folder entry (255 bytes) but whose previous build's
    // name (OUT.rbp-previous) does not: refused before anything is made.
    const d = paths();
    const name = 'o'.repeat(244);
    const out = path.join(d.dir, name);
    fs.mkdirSync(out);
    fs.writeFileSync(path.join(out, '.rbp-out'), '');
    const e = thrownUserError(tx(d.app, out, path.join(d.dir, 'cache'), true));
    expect(e.id).toBe('platform/out/name-too-long');
    expect(stable(e, { [d.dir]: '<dir>', [name]: '<244 o>', ['o'.repeat(24)]: '<24 o>' })).toMatchSnapshot();
    expect(fs.readdirSync(d.dir).sort()).toEqual(['app', name]);
  });

  it('platform/out/cannot-move: OUT is a mount point', async () => {
    // OUT is a volume mounted there (a tmpfs in a mount namespace of the test's own, which rbp runs in).
    const d = paths();
    const out = path.join(d.dir, 'out');
    fs.mkdirSync(out);
    const ns = process.getuid?.() === 0 ? ['--mount'] : ['--user', '--map-root-user', '--mount'];
    const r = await execa(
      'unshare',
      [
        ...ns,
        '--propagation',
        'private',
        '--',
        'sh',
        '-c',
        'mount -t tmpfs rbp-test "$0" && exec "$@"',
        out,
        process.execPath,
        '--',
        RBP,
        'build',
        d.app,
        '--out',
        out,
        '--type',
        'static',
      ],
      { reject: false, env: { ...process.env, NO_COLOR: '1' } },
    );
    expect(r.exitCode, r.stderr).toBe(2);
    // eslint-disable-next-line no-control-regex
    const text = /! ERROR[\s\S]*?\(error id: [^)]+\)/.exec(r.stderr.replace(/\x1b\[[0-9;]*m/g, ''))?.[0] ?? r.stderr;
    expect(text).toContain('(error id: platform/out/cannot-move)');
    expect(text.replaceAll(d.dir, '<dir>')).toMatchSnapshot();
    expect(fs.readdirSync(d.dir).sort()).toEqual(['app', 'out']);
  });
});

describe('rbp run: OUT', () => {
  it('platform/run/not-built', () => {
    const out = tmpDir('rbp-out-');
    expect(
      stable(
        thrownUserError(() => planLaunch({ outDir: out } as never)),
        { [out]: '<out>' },
      ),
    ).toMatchSnapshot();
  });

  it('platform/out/damaged', () => {
    const out = tmpDir('rbp-out-');
    fs.mkdirSync(path.join(out, 'layers', 'config'), { recursive: true });
    fs.writeFileSync(path.join(out, 'layers', 'config', 'metadata.toml'), 'this is = = not toml');
    const e = thrownUserError(() => planLaunch({ outDir: out } as never));
    expect(e.id).toBe('platform/out/damaged');
    expect(stable(e, { [out]: '<out>' })).toMatchSnapshot();
  });

  it('platform/out/building', async () => {
    const dir = tmpDir('rbp-out-');
    const out = path.join(dir, 'out');
    fs.mkdirSync(out);
    fs.writeFileSync(`${out}.rbp-lock`, `${process.ppid}\n`);
    const r = await cliError(['run', out]);
    expect(r.id).toBe('platform/out/building');
    expect(r.text.replaceAll(dir, '<dir>').replaceAll(`process ${process.ppid}`, 'process <pid>')).toMatchSnapshot();
  });
});

describe('the order of buildpacks', () => {
  it('platform/type/unknown', () => {
    expect(stable(thrownUserError(() => parseType('java')))).toMatchSnapshot();
    expect(stable(thrownUserError(() => parseType('php')))).toMatchSnapshot();
  });

  it('platform/order/file: missing, not TOML, no [[order]]', async () => {
    const dir = tmpDir('rbp-order-');
    expect(stable(await rejectedUserError(orderFromFile(path.join(dir, 'missing.toml'), [])), { [dir]: '<dir>' })).toMatchSnapshot();
    fs.writeFileSync(path.join(dir, 'bad.toml'), '[[order]\n');
    expect(stable(await rejectedUserError(orderFromFile(path.join(dir, 'bad.toml'), [])), { [dir]: '<dir>' })).toMatchSnapshot();
    fs.writeFileSync(path.join(dir, 'empty.toml'), 'order = 3\n');
    expect(stable(await rejectedUserError(orderFromFile(path.join(dir, 'empty.toml'), [])), { [dir]: '<dir>' })).toMatchSnapshot();
  });

  it('platform/buildpack/id-not-found and platform/buildpack/unsupported (-b as pack reads it)', async () => {
    expect(stable(await rejectedUserError(loadBuildpackRef('rbp/node@9.9.9')))).toMatchSnapshot();
    expect(stable(await rejectedUserError(loadBuildpackRef('node')))).toMatchSnapshot();
    expect(stable(await rejectedUserError(loadBuildpackRef('docker://docker.io/paketobuildpacks/nodejs')))).toMatchSnapshot();
  });

  it('platform/buildpack/not-found', async () => {
    expect(stable(await rejectedUserError(loadBuildpackDir('/nonexistent-buildpack')))).toMatchSnapshot();
  });

  it('platform/buildpack/not-built', () => {
    const before = process.env.RBP_BUILDPACKS_DIR;
    process.env.RBP_BUILDPACKS_DIR = tmpDir('rbp-bps-');
    try {
      const e = thrownUserError(() => ourBuildpack('node'));
      expect(e.id).toBe('platform/buildpack/not-built');
      expect(stable(e, { [process.env.RBP_BUILDPACKS_DIR]: '<dir>' })).toMatchSnapshot();
    } finally {
      if (before === undefined) delete process.env.RBP_BUILDPACKS_DIR;
      else process.env.RBP_BUILDPACKS_DIR = before;
    }
  });

  it('platform/order/not-found', async () => {
    const dir = tmpDir('rbp-order-');
    // Where our own buildpacks are depends on the checkout (dist/ built or not): named here.
    const before = process.env.RBP_BUILDPACKS_DIR;
    process.env.RBP_BUILDPACKS_DIR = path.join(dir, 'ours');
    try {
      const nf = await rejectedUserError(orderFromGroups([[{ id: 'example/missing', version: '1.0.0' }]], dir, [], path.join(dir, 'order.toml')));
      expect(nf.id).toBe('platform/order/not-found');
      expect(stable(nf, { [dir]: '<dir>' })).toMatchSnapshot();
    } finally {
      if (before === undefined) delete process.env.RBP_BUILDPACKS_DIR;
      else process.env.RBP_BUILDPACKS_DIR = before;
    }
  });

  it('platform/order/conflict', async () => {
    const e = await rejectedUserError(resolveOrder({ type: 'node', buildpacks: ['/somewhere'] }));
    expect(e.id).toBe('platform/order/conflict');
    expect(stable(e)).toMatchSnapshot();
  });

  it('platform/buildpack/order-cycle', async () => {
    const e = await rejectedUserError(resolveOrder({ buildpacks: [path.join(FIXTURES, 'buildpacks', 'composite-cycle')] }));
    expect(e.id).toBe('platform/buildpack/order-cycle');
    expect(stable(e)).toMatchSnapshot();
  });

  it('platform/buildpack/order-invalid', async () => {
    const dir = tmpDir('rbp-composite-');
    fs.writeFileSync(
      path.join(dir, 'buildpack.toml'),
      'api = "0.10"\n[buildpack]\nid = "test/bad-order"\nversion = "1.0.0"\n[[order]]\n[[order.group]]\nid = 42\nversion = "1.0.0"\n',
    );
    const e = await rejectedUserError(resolveOrder({ buildpacks: [dir] }));
    expect(e.id).toBe('platform/buildpack/order-invalid');
    expect(stable(e, { [dir]: '<dir>' })).toMatchSnapshot();
  });
});

describe('project.toml, buildpackages and images', () => {
  it('platform/project-toml/not-found and platform/project-toml/invalid', () => {
    const dir = tmpDir('rbp-project-');
    const nf = thrownUserError(() => readProjectDescriptor(dir, path.join(dir, 'missing.toml')));
    expect(nf.id).toBe('platform/project-toml/not-found');
    expect(stable(nf, { [dir]: '<dir>' })).toMatchSnapshot();
    fs.writeFileSync(path.join(dir, 'project.toml'), '[_]\nschema-version = "0.2"\n[[io.buildpacks.build.env]]\nname = "1BAD"\nvalue = "x"\n');
    const bad = thrownUserError(() => readProjectDescriptor(dir));
    expect(bad.id).toBe('platform/project-toml/invalid');
    expect(stable(bad, { [dir]: '<dir>' })).toMatchSnapshot();
  });

  it('platform/buildpackage/invalid', () => {
    const dir = tmpDir('rbp-bpkg-');
    fs.writeFileSync(path.join(dir, 'x.cnb'), 'not a tar');
    const e = thrownUserError(() => openBuildpackage(path.join(dir, 'x.cnb')));
    expect(e.id).toBe('platform/buildpackage/invalid');
    expect(stable(e, { [dir]: '<dir>' })).toMatchSnapshot();
  });

  it('platform/image/input', async () => {
    const dir = tmpDir('rbp-image-');
    const e = await rejectedUserError(
      writeAppImage({
        out: path.join(dir, 'out'),
        image: path.join(dir, 'image'),
        runImage: path.join(dir, 'run'),
        launcher: path.join(dir, 'launcher'),
        log: new Logger({ out: new Writable({ write: (_c, _e, cb) => cb() }) }),
      }),
    );
    expect(e.id).toBe('platform/image/input');
    expect(stable(e, { [dir]: '<dir>' })).toMatchSnapshot();
  });
});

describe('rbp builder', () => {
  it('platform/builder/tool-missing: which tool, where it was looked for, how to get it', () => {
    const none = tmpDir('rbp-no-tools-');
    const e = thrownUserError(() => checkBuilderTools(path.join(none, 'run-image', 'layout'), path.join(none, 'lifecycle', '0.20.8')));
    expect(stable(e, { [none]: '<tools>' })).toMatchSnapshot();
  });
});

describe('rbp deploy', () => {
  it('platform/deploy/crashed, platform/deploy/not-listening, platform/deploy/health-check', () => {
    expect(stable(crashedError('web', 1, ['listening on 8080', "Error: Cannot find module '/workspace/missing.js'"]))).toMatchSnapshot();
    expect(stable(crashedError('web', 137, []))).toMatchSnapshot();
    expect(stable(notListeningError(8080, 60_000))).toMatchSnapshot();
    expect(stable(healthCheckError([{ path: '/health', status: '500' }]))).toMatchSnapshot();
  });
});

describe('--json errors of a failed detect or build', () => {
  it.each([
    [20, 'no buildpack group passed detection'],
    [21, 'detection failed with a buildpack error'],
    [51, 'rbp/node@0.1.0 failed (exit 1) after 1.2s'],
    [52, 'rbp/node@0.1.0: build.toml [[unmet]] x is not in its plan'],
    [62, 'export failed: no space left on device'],
    [143, 'interrupted by SIGTERM'],
    [1, 'something else'],
  ])('status %s', (code, message) => {
    expect(stableRendering({ data: failureError(code, message) })).toMatchSnapshot();
  });

  it("a buildpack's own error is read back from its output", () => {
    const e = thrownUserError(() => parseType('java'));
    const printed = `some output\n${renderUserError(e.data)
      .split('\n')
      .map((l) => `  \u001b[31m${l}\u001b[39m`)
      .join('\n')}\nmore\n`;
    expect(parseRenderedError(printed)).toEqual({ id: e.data.id, title: e.data.title, rule: e.data.rule, fix: e.data.fix });
    expect(parseRenderedError('no error here')).toBeUndefined();
  });
});
