/**
 * The direct launch script (lib/launch/direct.ts), run by the system's /bin/sh: it starts the
 * planned command itself with the run environment's port, and hands over to the Node.js launcher for
 * anything else, or fails with one clear error when the image has no Node.js.
 *
 * The planned command here is /usr/bin/printf, which shows exactly the argv and environment the
 * script gives it. The "Node.js launcher" beside the script is a one-line script run by this Node.js
 * that prints what the script handed over: the hand-over protocol is what is under test, and the real
 * launcher behind it is tested through rbp in test/launch/install.test.ts and test/static.
 */
import { execa } from 'execa';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { raw } from '../../lib/config/read.ts';
import type { RuntimeLaunch } from '../../lib/launch/plan.ts';
import { planDirect } from '../../lib/launch/direct.ts';
import { tmpDir } from '../helpers/rbp.ts';

/** A runtime whose command prints its argv, one per line, and the port variables it was given. */
const printing: RuntimeLaunch = {
  portVariable: 'CC_STATIC_PORT',
  plan: ({ env, appDir, port }) => ({
    argv: [
      '/usr/bin/printf',
      '%s\\n',
      `port=${port}`,
      `root=${path.join(appDir, 'public')}`,
      `flags=${raw(env, 'CC_STATIC_FLAGS') ?? ''}`,
      'it\'s "quoted" $HOME `x` \\ *',
    ],
    env: { EXTRA: `listen on ${port}` },
    facts: {},
  }),
};

interface Launched {
  code: number;
  stdout: string;
  stderr: string;
}

/** Writes the script for `runtime` (planned with `buildEnv`) and runs it in an app folder with exactly `runEnv`. */
async function launch(
  runtime: RuntimeLaunch,
  buildEnv: Record<string, string>,
  runEnv: Record<string, string>,
  opts: { node?: boolean; cacheVcl?: boolean } = {},
): Promise<Launched> {
  const plan = planDirect(runtime, buildEnv);
  if (!plan.ok) throw new Error(plan.why);
  const dir = tmpDir('rbp-direct-');
  const bin = path.join(dir, 'layer', 'bin');
  fs.mkdirSync(bin, { recursive: true });
  fs.writeFileSync(path.join(bin, 'launch'), plan.script(opts.node ? process.execPath : undefined), { mode: 0o755 });
  fs.writeFileSync(path.join(bin, 'launch.cjs'), 'console.log(`node launcher: ${process.env.RBP_DIRECT_LAUNCH}; args ${process.argv.slice(2).join(" ")}`)\n');
  const app = path.join(dir, 'app');
  fs.mkdirSync(path.join(app, '.rbp'), { recursive: true });
  if (opts.cacheVcl) fs.writeFileSync(path.join(app, '.rbp', 'cache.vcl'), 'vcl 4.1;\n');
  const r = await execa(path.join(bin, 'launch'), ['user-arg'], { cwd: app, env: { PATH: '/usr/bin:/bin', ...runEnv }, extendEnv: false, reject: false });
  return { code: r.exitCode ?? -1, stdout: r.stdout, stderr: r.stderr.replaceAll(app, '<app>') };
}

const lines = (r: Launched) => r.stdout.split('\n');

describe('the direct launch script', () => {
  it('starts the command itself: the port of the run environment, the app folder at run time, every word exactly as planned', async () => {
    const r = await launch(printing, {}, {});
    expect(r.code).toBe(0);
    const out = lines(r);
    expect(out[0]).toBe('- exec /usr/bin/printf (the launch script starts it directly: nothing to supervise)');
    expect(out.slice(1, 4)).toEqual(['port=8080', expect.stringMatching(/^root=\/.*\/app\/public$/), 'flags=']);
    expect(out[4]).toBe('it\'s "quoted" $HOME `x` \\ *');
  });

  it('takes the runtime’s port variable, else the public port, else 8080; whitespace only is unset', async () => {
    expect(lines(await launch(printing, {}, { CC_STATIC_PORT: ' 8181 ', RBP_PUBLIC_PORT: '9191' }))[1]).toBe('port=8181');
    expect(lines(await launch(printing, {}, { CC_STATIC_PORT: '  ', RBP_PUBLIC_PORT: '9191' }))[1]).toBe('port=9191');
    expect(lines(await launch(printing, {}, { RBP_PUBLIC_PORT: '65535' }))[1]).toBe('port=65535');
  });

  it('sets PORT and the plan’s variables for the command', async () => {
    const env: RuntimeLaunch = { plan: ({ port }) => ({ argv: ['/usr/bin/env'], env: { EXTRA: `on ${port}` }, facts: {} }) };
    const r = await launch(env, {}, { RBP_PUBLIC_PORT: '8282', KEPT: 'yes' });
    expect(lines(r)).toEqual(expect.arrayContaining(['PORT=8282', 'EXTRA=on 8282', 'KEPT=yes']));
  });

  it('a variable the command was planned with must be as it was at build (whitespace aside)', async () => {
    expect(lines(await launch(printing, { CC_STATIC_FLAGS: '--a' }, { CC_STATIC_FLAGS: ' --a ' }))[3]).toBe('flags=--a');
    const changed = await launch(printing, { CC_STATIC_FLAGS: '--a' }, { CC_STATIC_FLAGS: '--b' }, { node: true });
    expect(changed.stdout).toBe('node launcher: CC_STATIC_FLAGS differs from its value at build, which the command was planned with; args user-arg');
  });

  it('hands every request-flow activation over to the Node.js launcher, and only a set one', async () => {
    const cases: [Record<string, string>, string][] = [
      [{ ACCESSPROXY_CHALLENGE_SECRET: 's' }, 'ACCESSPROXY_CHALLENGE_SECRET activates the access proxy'],
      [{ CC_REDIRECTOR_PROJECT_KEY: 'k' }, 'CC_REDIRECTOR_PROJECT_KEY activates the redirection proxy'],
      [{ CC_CACHE_FILE: 'my.vcl' }, 'CC_CACHE_FILE activates the cache proxy'],
      [{ CC_REQUEST_FLOW: 'block' }, 'CC_REQUEST_FLOW sets a request flow'],
      [{ CC_STATIC_PORT: '80a' }, 'CC_STATIC_PORT is not a port'],
      [{ RBP_PUBLIC_PORT: '70000' }, 'RBP_PUBLIC_PORT is not a port'],
      [{ CC_STATIC_PORT: '0' }, 'CC_STATIC_PORT is not a port'],
    ];
    for (const [env, why] of cases) expect((await launch(printing, {}, env, { node: true })).stdout).toBe(`node launcher: ${why}; args user-arg`);
    expect((await launch(printing, {}, {}, { node: true, cacheVcl: true })).stdout).toBe(
      'node launcher: .rbp/cache.vcl activates the cache proxy; args user-arg',
    );
    // Whitespace only activates nothing; RBP_RESTART=no restarts nothing.
    expect(lines(await launch(printing, {}, { CC_REDIRECTOR_PROJECT_KEY: ' ', RBP_RESTART: 'no' }, { node: true }))[1]).toBe('port=8080');
  });

  it('a dry run goes to the Node.js launcher, told that the script would start the command itself', async () => {
    expect((await launch(printing, {}, { RBP_DRY_RUN: '1' }, { node: true })).stdout).toBe('node launcher: exec; args user-arg');
    expect((await launch(printing, {}, { RBP_DRY_RUN: '1', CC_REQUEST_FLOW: 'block' }, { node: true })).stdout).toBe(
      'node launcher: CC_REQUEST_FLOW sets a request flow; args user-arg',
    );
  });

  it('without a Node.js: what needs the launcher is one clear error, exit 1', async () => {
    const r = await launch(printing, {}, { CC_REDIRECTOR_PROJECT_KEY: 'secret-value' });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatchInlineSnapshot(`
      "! ERROR This launch needs the Node.js launcher, and the image has no Node.js
      !
      ! Seen: what needs the launcher: "CC_REDIRECTOR_PROJECT_KEY activates the redirection proxy" (the launch environment)
      ! Rule: The launch script starts the server itself, and restarts it (RBP_RESTART), when nothing else needs the Node.js launcher: no request flow, no dry run, and the variables its command was planned with unchanged since the build. The build saw none of these, so it put no Node.js in the image.
      ! Fix:  Set the same variables at build and rebuild (the build then adds the Node.js launcher), or name a Node.js of the run image with RBP_LAUNCHER_NODE at build.
      ! (error id: launch/direct/needs-node)"
    `);
    expect(r.stderr).not.toContain('secret-value');
  });

  it('without a Node.js: a port that is not one is the variable’s own error', async () => {
    const r = await launch(printing, {}, { CC_STATIC_PORT: 'eighty' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatchInlineSnapshot(`
      "! ERROR Invalid CC_STATIC_PORT
      !
      ! Seen: CC_STATIC_PORT: "eighty" (the application environment)
      ! Rule: CC_STATIC_PORT is a port number, a whole number from 1 to 65535 (contract, ports exposed by the application).
      ! Fix:  Set CC_STATIC_PORT to a valid value, or unset it for the default "8080".
      ! (error id: config/CC_STATIC_PORT/invalid)"
    `);
  });

  it('the server override: the run image’s server named at run time replaces the built one', async () => {
    const server: RuntimeLaunch = {
      serverOverride: { variable: 'RBP_TOOL_SERVER', builtPath: '/usr/bin/printf' },
      plan: ({ env, port }) => ({ argv: [raw(env, 'RBP_TOOL_SERVER') ?? '/usr/bin/printf', '%s\\n', String(port)], env: {}, facts: {} }),
    };
    expect(lines(await launch(server, { RBP_TOOL_SERVER: '/somewhere/else' }, {})).slice(1)).toEqual(['8080']);
    expect(lines(await launch(server, {}, { RBP_TOOL_SERVER: '/usr/bin/echo' })).slice(1)).toEqual(['%s\\n 8080']);
  });
});

describe('planDirect: when the launch always needs the Node.js launcher', () => {
  it('a runtime that supervises its command', () => {
    expect(planDirect({ plan: () => ({ argv: ['node', 'a.js'], env: {}, facts: {}, supervise: 'scripts.poststart runs after the app exits' }) }, {})).toEqual({
      ok: false,
      why: 'scripts.poststart runs after the app exits',
    });
  });
  it('a shell command that does not end in exec', () => {
    const r = planDirect({ plan: () => ({ argv: ['/bin/sh', '-c', 'php migrate.php && frankenphp php-server'], env: {}, facts: {} }) }, {});
    expect(r).toEqual({ ok: false, why: 'the shell command does not end in exec: only the supervisor stops its whole process group' });
  });
  it('a command that depends on a secret, which the script may not record', () => {
    const r = planDirect({ plan: ({ env }) => ({ argv: ['/bin/x', env.NPM_TOKEN ?? ''], env: {}, facts: {} }) }, { NPM_TOKEN: 'abc' });
    expect(r).toEqual({ ok: false, why: 'the command depends on NPM_TOKEN, a secret the launch script may not record' });
  });
  it('records exactly the variables the plan read', () => {
    const r = planDirect(printing, { CC_STATIC_FLAGS: '--x', OTHER: 'y' });
    expect(r.ok && r.reads).toEqual(['CC_STATIC_FLAGS']);
  });
});

it('the script is plain POSIX sh: dash parses it with -n', async () => {
  const plan = planDirect(printing, {});
  if (!plan.ok) throw new Error(plan.why);
  const file = path.join(tmpDir('rbp-direct-sh-'), 'launch');
  fs.writeFileSync(file, plan.script('/opt/node/bin/node'));
  const r = await execa('dash', ['-n', file], { reject: false });
  expect(r.exitCode, r.stderr).toBe(0);
});
