/**
 * rbp runs our own buildpacks' detect in its own process (lib/platform/detect.ts): the detect compiled
 * into rbp when the buildpack folder comes from the same build, else the folder's lib/detect.cjs that
 * bin/detect runs, loaded with require; either is given the same environment and directory. It must
 * be indistinguishable from running bin/detect as the lifecycle does: same exit codes, output, plan
 * and group, for apps each buildpack passes, declines and rejects as broken input.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { detectExit } from '../../lib/cnb/context.ts';
import { Logger } from '../../lib/log.ts';
import { detect, type PhaseEnv } from '../../lib/platform/detect.ts';
import { filteredHostEnv } from '../../lib/platform/env.ts';
import { resolveOrder } from '../../lib/platform/order.ts';
import { copyFixture, rbp, RBP, ROOT, tmpDir } from '../helpers/rbp.ts';

async function detectWith(app: string, user: Record<string, string>, inProcess: boolean, base = filteredHostEnv()) {
  const platformDir = tmpDir('rbp-inproc-platform-');
  fs.mkdirSync(path.join(platformDir, 'env'));
  for (const [k, v] of Object.entries(user)) fs.writeFileSync(path.join(platformDir, 'env', k), v);
  const penv: PhaseEnv = { base, user, operator: {}, platformDir, inProcess };
  let log = '';
  const sink = new PassThrough();
  sink.on('data', (d: Buffer) => (log += d.toString()));
  const r = await detect(await resolveOrder({}), app, penv, new Logger({ out: sink, color: false, level: 'verbose' }));
  return {
    code: r.code,
    group: (r.group ?? []).map((g) => g.descriptor.buildpack.id),
    plan: (r.entries ?? []).map((e) => ({ requires: e.requires, providers: e.providers.map((p) => p.descriptor.buildpack.id) })),
    log,
  };
}

/** A PATH of this machine's folders without any node: bin/detect cannot start there. */
function pathWithoutNode(): string {
  const dir = tmpDir('rbp-inproc-bin-');
  for (const d of ['/usr/local/bin', '/usr/bin', '/bin']) {
    if (!fs.existsSync(d)) continue;
    for (const name of fs.readdirSync(d)) {
      if (['node', 'nodejs'].includes(name) || fs.existsSync(path.join(dir, name))) continue;
      fs.symlinkSync(path.join(d, name), path.join(dir, name));
    }
  }
  return dir;
}

const cases: [string, string, Record<string, string>][] = [
  ['node passes', 'node-hello', {}],
  ['node declines, static passes (a generator project)', 'node-nothing-to-start', {}],
  ['node: a broken package.json is an error', 'node-bad-package-json', {}],
  ['static passes on an index.html', 'static-index-html', {}],
  ['static: a generator detected', 'static-hugo', {}],
  ['static: CC_BUILD_COMMAND', 'static-build-command', { CC_BUILD_COMMAND: 'mkdir -p public && echo hi > public/index.html', CC_WEBROOT: 'public' }],
  ['phpserver passes on index.php, after node and static decline', 'php-index-php', {}],
  ['phpserver: CC_WEBROOT', 'php-webroot', { CC_WEBROOT: 'public' }],
  ['a webroot outside the app is an error', 'php-index-php', { CC_WEBROOT: '../../etc' }],
  ['nothing passes', 'static-no-index', {}],
];

describe('our detects in-process agree with their bin/detect', () => {
  it.each(cases)(
    '%s (%s)',
    async (_name, fixture, user) => {
      const app = copyFixture(fixture);
      const inProcess = await detectWith(app, user, true);
      const asProcess = await detectWith(app, user, false);
      expect(inProcess).toEqual(asProcess);
    },
    60_000,
  );

  it('the app directory through a symbolic link is seen as a process started there sees it (its physical path)', async () => {
    const app = copyFixture('php-no-index');
    const link = path.join(tmpDir('rbp-inproc-link-'), 'app');
    fs.symlinkSync(app, link);
    const user = { CC_WEBROOT: 'missing' };
    const inProcess = await detectWith(link, user, true);
    const asProcess = await detectWith(link, user, false);
    expect(inProcess.code).not.toBe(0);
    expect(inProcess).toEqual(asProcess);
  }, 60_000);

  it('in-process starts no Node.js: with no node on PATH ours still detect, while bin/detect cannot start', async () => {
    const app = copyFixture('php-index-php');
    const base = { ...filteredHostEnv(), PATH: pathWithoutNode() };
    const inProcess = await detectWith(app, {}, true, base);
    expect(inProcess.code).toBe(0);
    expect(inProcess.group).toEqual(['rbp/phpserver']);
    const asProcess = await detectWith(app, {}, false, base);
    expect(asProcess.code).toBe(21);
    expect(asProcess.log).toContain('bin/detect needs Node.js >= 20');
  }, 60_000);

  it('a lib/detect.cjs built by an older rbp (no rbp-detect-api mark: it runs as a program when loaded) runs as bin/detect', async () => {
    const dir = tmpDir('rbp-inproc-old-');
    fs.cpSync(path.join(ROOT, 'dist', 'buildpacks'), dir, { recursive: true });
    fs.writeFileSync(
      path.join(dir, 'phpserver', 'lib', 'detect.cjs'),
      "process.stdout.write('an older bundle\\n');\nprocess.exit(require.main === module ? 100 : 7);\n",
    );
    const r = await rbp(['detect', copyFixture('php-index-php'), '--type', 'phpserver'], { env: { RBP_BUILDPACKS_DIR: dir } });
    expect(r.exitCode, r.all).toBe(20);
    expect(r.stdout).toContain('fail: rbp/phpserver@');
    expect(r.stdout).toContain('an older bundle');
  }, 60_000);

  it('with NODE_OPTIONS set for the buildpacks, bin/detect runs: that Node.js start obeys them', async () => {
    const app = copyFixture('php-index-php');
    const r = await detectWith(app, { NODE_OPTIONS: '--require /nonexistent/rbp-preload.cjs' }, true);
    expect(r.code).toBe(21);
    expect(r.log).toContain('/nonexistent/rbp-preload.cjs');
  }, 60_000);
});

describe('our detects compiled into rbp, and a buildpack folder of another build', () => {
  /**
   * A copy of dist/buildpacks whose phpserver detect bundle says "the folder's copy found index.php"
   * where the built one says "found index.php"; with `otherBuild`, its lib/detect.cjs also names
   * another build id, as a folder built by another rbp (older, newer, edited) does.
   */
  function changedBuildpacks(otherBuild: boolean): string {
    const dir = tmpDir('rbp-inproc-changed-');
    fs.cpSync(path.join(ROOT, 'dist', 'buildpacks'), dir, { recursive: true });
    const lib = path.join(dir, 'phpserver', 'lib');
    const bundle = fs.readFileSync(path.join(lib, 'detect.bundle.cjs'), 'utf8');
    expect(bundle).toContain('`found ${');
    fs.writeFileSync(path.join(lib, 'detect.bundle.cjs'), bundle.replace('`found ${', "`the folder's copy found ${"));
    const program = fs.readFileSync(path.join(lib, 'detect.cjs'), 'utf8');
    expect(program.split('\n')[0]).toMatch(/^\/\/ rbp-detect-api: 1; build [0-9a-f]{24}$/);
    if (otherBuild) fs.writeFileSync(path.join(lib, 'detect.cjs'), program.replace(/; build [0-9a-f]+\n/, '; build 0123456789abcdef01234567\n'));
    return dir;
  }

  /** rbp detect (the detect CLI) with no node on PATH: a bin/detect cannot start, only in-process detects pass. */
  async function detectWithoutNode(buildpacks: string) {
    const env = { PATH: pathWithoutNode(), HOME: process.env.HOME ?? '/root', NO_COLOR: '1', RBP_BUILDPACKS_DIR: buildpacks };
    return await execa(process.execPath, ['--', RBP, 'detect', copyFixture('php-index-php')], { reject: false, all: true, env, extendEnv: false });
  }

  it("runs the detect compiled into rbp for a folder of its own build: the folder's detect code is not run", async () => {
    const r = await detectWithoutNode(changedBuildpacks(false));
    expect(r.exitCode, r.all).toBe(0);
    expect(r.stdout).toMatch(/pass: rbp\/phpserver@.*\n\s+found index\.php/);
    expect(r.stdout).not.toContain("the folder's copy");
  }, 60_000);

  it.each([
    ['node-hello', []],
    ['node-bad-package-json', []],
    ['static-hugo', []],
    ['php-webroot', ['--env', 'CC_WEBROOT=public']],
    ['php-index-php', ['--env', 'CC_WEBROOT=../../etc']],
  ])(
    'the detects compiled into rbp agree with bin/detect (%s)',
    async (fixture, flags) => {
      const app = copyFixture(fixture);
      // A folder with no rbp-detect-api mark (as an older build's): rbp runs its bin/detect.
      const asProcess = tmpDir('rbp-inproc-process-');
      fs.cpSync(path.join(ROOT, 'dist', 'buildpacks'), asProcess, { recursive: true });
      for (const n of ['node', 'static', 'phpserver']) {
        const f = path.join(asProcess, n, 'lib', 'detect.cjs');
        fs.writeFileSync(f, fs.readFileSync(f, 'utf8').replace(/^\/\/ rbp-detect-api[^\n]*\n/, ''));
      }
      const compiled = await rbp(['detect', app, '--json', '--verbose', ...flags]);
      const processes = await rbp(['detect', app, '--json', '--verbose', ...flags], { env: { RBP_BUILDPACKS_DIR: asProcess } });
      expect(compiled.exitCode).toBe(processes.exitCode);
      expect(JSON.parse(compiled.stdout)).toEqual(JSON.parse(processes.stdout));
      expect(compiled.stderr).toBe(processes.stderr);
    },
    60_000,
  );

  it('reads an edited buildpack.toml as written, not as rbp parsed it at build time', async () => {
    const dir = tmpDir('rbp-inproc-toml-');
    fs.cpSync(path.join(ROOT, 'dist', 'buildpacks'), dir, { recursive: true });
    const toml = path.join(dir, 'phpserver', 'buildpack.toml');
    const text = fs.readFileSync(toml, 'utf8');
    expect(text).toMatch(/^version = "[^"]+"$/m);
    const built = await rbp(['detect', copyFixture('php-index-php')], { env: { RBP_BUILDPACKS_DIR: dir } });
    expect(built.stdout).toMatch(/group: rbp\/phpserver@\d/);
    fs.writeFileSync(toml, text.replace(/^version = "[^"]+"$/m, 'version = "9.9.9-edited"'));
    const edited = await rbp(['detect', copyFixture('php-index-php')], { env: { RBP_BUILDPACKS_DIR: dir } });
    expect(edited.exitCode, edited.all).toBe(0);
    expect(edited.stdout).toContain('group: rbp/phpserver@9.9.9-edited');
  }, 60_000);

  it("loads a folder's own lib/detect.cjs, in rbp's process, when it names another build", async () => {
    const r = await detectWithoutNode(changedBuildpacks(true));
    expect(r.exitCode, r.all).toBe(0);
    expect(r.stdout).toMatch(/pass: rbp\/phpserver@.*\n\s+the folder's copy found index\.php/);
  }, 60_000);
});

describe('the platform folder handed to a compiled detect in memory (detectExit with PlatformInMemory)', () => {
  const processEnv = { CNB_BUILDPACK_DIR: path.join(ROOT, 'dist', 'buildpacks', 'phpserver'), PATH: '/usr/bin', GREETING: 'from rbp' };

  function platform(user: Record<string, string>) {
    const made: string[] = [];
    return {
      made,
      p: {
        env: user,
        named: true,
        dir: () => {
          if (!made.length) {
            made.push(tmpDir('rbp-inproc-lazy-'));
            fs.mkdirSync(path.join(made[0]!, 'env'));
            for (const [k, v] of Object.entries(user)) fs.writeFileSync(path.join(made[0]!, 'env', k), v);
          }
          return made[0]!;
        },
      },
    };
  }

  it('gives the platform variables over the process environment, as <platform>/env/ files would, without making the folder', async () => {
    const { made, p } = platform({ GREETING: 'from the platform', CC_WEBROOT: 'public' });
    let seen: Record<string, string | undefined> = {};
    const r = await detectExit(
      (ctx) => ((seen = { greeting: ctx.env.GREETING, webroot: ctx.env.CC_WEBROOT, path: ctx.env.PATH }), { pass: false, reason: 'no' }),
      processEnv,
      '/',
      () => {},
      p,
    );
    expect(r.code).toBe(100);
    expect(seen).toEqual({ greeting: 'from the platform', webroot: 'public', path: '/usr/bin' });
    expect(made).toEqual([]);
  });

  it('makes the folder when the detect reads it (ctx.platformDir, CNB_PLATFORM_DIR), once', async () => {
    const { made, p } = platform({ GREETING: 'from the platform' });
    let seen: string[] = [];
    await detectExit(
      (ctx) => ((seen = [ctx.platformDir, ctx.env.CNB_PLATFORM_DIR!, fs.readFileSync(path.join(ctx.platformDir, 'env', 'GREETING'), 'utf8')]), { pass: true }),
      processEnv,
      '/',
      () => {},
      p,
    );
    expect(made).toHaveLength(1);
    expect(seen).toEqual([made[0], made[0], 'from the platform']);
  });

  it('without CNB_PLATFORM_DIR when the buildpack API does not name it; a CNB_PLATFORM_DIR the user sets wins, as its env/ file would', async () => {
    const { p } = platform({});
    let names: string[] = [];
    await detectExit(
      (ctx) => ((names = Object.keys(ctx.env)), { pass: true }),
      processEnv,
      '/',
      () => {},
      { ...p, named: false },
    );
    expect(names).not.toContain('CNB_PLATFORM_DIR');
    const user = platform({ CNB_PLATFORM_DIR: '/set/by/the/user' });
    let value: string | undefined;
    await detectExit(
      (ctx) => ((value = ctx.env.CNB_PLATFORM_DIR), { pass: true }),
      processEnv,
      '/',
      () => {},
      user.p,
    );
    expect(value).toBe('/set/by/the/user');
    expect(user.made).toEqual([]);
  });
});
