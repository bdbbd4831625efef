/**
 * Our three buildpacks under the reference lifecycle, without rbp (part 2).
 *
 * Detect, every runtime fixture (fixtures/node-*, static-*, php-* with a test.json), with the
 * variables of its first case: the reference detector, over the order node, static, phpserver (as
 * rbp's own), ends with the same exit code and picks the same group as `rbp detect`.
 *
 * Build and launch, one representative fixture per runtime family (a full build downloads Node.js
 * and takes tens of seconds on two cores):
 * - static-caddy-forced: the reference builder builds it, the reference launcher starts the default
 *   process, which serves the site (200) with the operator's Caddy (RBP_TOOL_CADDY);
 * - node-npm-lock: Node.js and npm installed from the npm registry, `npm install`, served (200);
 * - php-task: PHP from the operator (RBP_TOOL_PHP), the application server from a mirror holding a
 *   fixture artifact (as test/phpserver does: it is never run), the task run by the launcher, exit 0;
 * - php-index-php served over HTTP only when RBP_TOOL_FRANKENPHP names a real server.
 * Rebuild, node-npm-lock: the whole platform sequence (analyzer, detector, restorer, builder,
 * exporter into an OCI layout and a volume cache) twice; the second build reuses the tools rbp's
 * second build reuses (`reused <tool> <version> (cached)`) and installs the same others.
 * Operator variables go where a platform puts them: the build-config env (CNB_BUILD_CONFIG_DIR/env/).
 */
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readProjectDescriptor } from '../../lib/platform/project-descriptor.ts';
import { copyFixture, envArgs, FIXTURES, freePort, rbp, ROOT, tmpDir, waitForHttp } from '../helpers/rbp.ts';
import { makeMirror, SYSTEM_PHP as PHP, SYSTEM_COMPOSER as COMPOSER } from '../phpserver/support.ts';
import { detectAndBuild, detector, fullBuild, nextBuild, launch, makeLayout, skipWithoutLifecycle, startLauncher, type Layout } from './lifecycle.ts';
import { readFixture } from '../helpers/fixture-spec.ts';

const skip = skipWithoutLifecycle('reference lifecycle: runtime fixtures');
const DIST = path.join(ROOT, 'dist', 'buildpacks');
const OURS = ['node', 'static', 'phpserver'].map((n) => path.join(DIST, n));
/** rbp's automatic order: three groups of one buildpack each. */
const ORDER = OURS.map((dir) => [{ dir }]);

/** The trust settings of this machine (a TLS-intercepting proxy): an operator sets them in the build-config env. */
const TRUST = Object.fromEntries(['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR'].flatMap((k) => (process.env[k] ? [[k, process.env[k]]] : [])));
const CADDY = process.env.RBP_TOOL_CADDY ?? (fs.existsSync('/usr/bin/caddy') ? '/usr/bin/caddy' : undefined);

/** The first case's variables over the project.toml build env, as pack hands both to the lifecycle (platform env). */
function firstEnv(name: string): Record<string, string> {
  const project = readProjectDescriptor(path.join(FIXTURES, name));
  return { ...(project?.env ?? {}), ...(readFixture(name).cases[0]?.env ?? {}) };
}

const FIXTURE_NAMES = fs
  .readdirSync(FIXTURES)
  .filter((n) => /^(node|static|php)-/.test(n) && fs.existsSync(path.join(FIXTURES, n, 'test.json')))
  .sort();

let mirror: string;
beforeAll(() => {
  mirror = makeMirror();
});

function operator(extra: Record<string, string> = {}): Record<string, string> {
  return { ...TRUST, ...(CADDY ? { RBP_TOOL_CADDY: CADDY } : {}), ...extra };
}
/** test/phpserver's operator: Debian's PHP and Composer, the server from the mirror; the run image's Node.js for the launcher. */
const phpOperator = (extra: Record<string, string> = {}) => ({
  RBP_TOOL_PHP: PHP,
  RBP_TOOL_COMPOSER: COMPOSER,
  RBP_DEPENDENCY_MIRROR: mirror,
  RBP_LAUNCHER_NODE: process.execPath,
  ...extra,
});

describe.skipIf(skip)('detect: the reference detector picks the group rbp picks', () => {
  it.each(FIXTURE_NAMES)('%s', async (name) => {
    const env = firstEnv(name);
    const app = path.join(FIXTURES, name);
    const ref = await detector(makeLayout(app, { buildpacks: OURS, order: ORDER, userEnv: env, operatorEnv: operator() }));
    const ours = await rbp(['detect', app, ...envArgs(env)], { env: { ...process.env, ...operator() } });
    const rbpGroup = /^.*group: (.*)$/m.exec(ours.all)?.[1]?.split(', ') ?? [];
    expect({ code: ours.exitCode, group: rbpGroup }, `${ref.output}\n---- rbp:\n${ours.all}`).toEqual({
      code: ref.code,
      group: (ref.group ?? []).map((g) => `${g.id}@${g.version}`),
    });
  });
});

/** Builds a copy of the fixture under the reference lifecycle; fails the test with the log when it fails. */
async function refBuild(name: string, env: Record<string, string>, extraOperator: Record<string, string> = {}): Promise<Layout> {
  const l = makeLayout(copyFixture(name), { buildpacks: OURS, order: ORDER, userEnv: env, operatorEnv: operator(extraOperator) });
  const r = await detectAndBuild(l);
  expect(r.code, r.output).toBe(0);
  return l;
}

/** Starts the default process with the reference launcher on a free port and GETs `/`. */
async function serveDefault(l: Layout, runEnv: Record<string, string>, contains: string): Promise<void> {
  const port = await freePort();
  // The public port is 8080 in an image; RBP_PUBLIC_PORT moves it, as `rbp run --port` does.
  const s = startLauncher(l, { env: { ...runEnv, PORT: String(port), RBP_PUBLIC_PORT: String(port) } });
  try {
    await waitForHttp(port, s.alive, 60_000).catch((e: unknown) => {
      throw new Error(`${(e as Error).message}\n${s.output()}`);
    });
    const res = await fetch(`http://127.0.0.1:${port}/`);
    const body = await res.text();
    expect(res.status, body).toBe(200);
    expect(body).toContain(contains);
  } finally {
    await s.stop();
  }
}

describe.skipIf(skip)('build and launch under the reference lifecycle', () => {
  const work: string[] = [];
  afterAll(() => work.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

  it.skipIf(!CADDY)(
    'static-caddy-forced: builds, and the default process serves the site',
    async () => {
      const env = firstEnv('static-caddy-forced');
      const l = await refBuild('static-caddy-forced', env);
      work.push(l.root);
      await serveDefault(l, env, 'Served by caddy file-server');
    },
    300_000,
  );

  it('node-npm-lock: installs Node.js and the dependencies, and the default process serves the app', async () => {
    const l = await refBuild('node-npm-lock', {});
    work.push(l.root);
    expect(fs.existsSync(path.join(l.layers, 'rbp_node'))).toBe(true);
    await serveDefault(l, {}, 'hello from node v24.15.0 (production)');
  }, 600_000);

  it('php-task: builds, and the launcher runs the task, which exits 0', async () => {
    const l = await refBuild('php-task', {}, phpOperator());
    work.push(l.root);
    // A platform runs a task as a command in the launch environment: `launcher -- CMD`.
    const r = await launch(l, { direct: true, args: ['/bin/sh', '-c', 'php bin/hello.php one two'], env: { RBP_TOOL_PHP: PHP } });
    expect(r.code, r.output).toBe(0);
    expect(r.output).toContain('task ran with PHP');
    expect(r.output).toContain('as cli, args: one two');
  }, 300_000);

  it('node-npm-lock rebuilt with the previous layers restored reuses what rbp reuses', async () => {
    /** What a build's log says of each tool: reused from the cache or installed, and why. */
    const installs = (log: string) => [...log.matchAll(/^- (reused \S+ \S+ \(cached\)|installing \S+ \S+ \([^)]*\))/gm)].map((m) => m[1]!).sort();
    const first = makeLayout(copyFixture('node-npm-lock'), { buildpacks: OURS, order: ORDER, operatorEnv: operator() });
    work.push(first.root);
    const r1 = await fullBuild(first);
    expect(r1.code, r1.output).toBe(0);
    const r2 = await fullBuild(nextBuild(first, path.join(FIXTURES, 'node-npm-lock')));
    expect(r2.code, r2.output).toBe(0);
    expect(r2.output).toMatch(/Restoring data for "rbp\/node:/);

    const out = path.join(tmpDir('rbp-reflc-rbp-'), 'out');
    work.push(path.dirname(out));
    const env = { ...process.env, ...operator() };
    const b1 = await rbp(['build', copyFixture('node-npm-lock'), '--out', out, '--type', 'node'], { env });
    expect(b1.exitCode, b1.all).toBe(0);
    const b2 = await rbp(['build', copyFixture('node-npm-lock'), '--out', out, '--type', 'node'], { env });
    expect(b2.exitCode, b2.all).toBe(0);
    expect(installs(b2.all).some((l) => l.startsWith('reused node '))).toBe(true);
    expect(installs(r2.output)).toEqual(installs(b2.all));
  }, 900_000);

  it.skipIf(!process.env.RBP_TOOL_FRANKENPHP)(
    'php-index-php: the default process serves index.php (RBP_TOOL_FRANKENPHP)',
    async () => {
      const l = await refBuild('php-index-php', {}, phpOperator({ RBP_TOOL_FRANKENPHP: process.env.RBP_TOOL_FRANKENPHP! }));
      work.push(l.root);
      await serveDefault(l, {}, 'hello from index.php');
    },
    300_000,
  );
});

if (!process.env.RBP_TOOL_FRANKENPHP)
  console.warn('reference lifecycle: RBP_TOOL_FRANKENPHP is not set: php-index-php is not served (its build is covered by php-task)');
