/**
 * What the buildpacks say when the application is wrong: each user error of node, static and
 * phpserver that no other test renders, rendered once from the function that decides it (the
 * package manager's or Composer's own output is not part of these: the errors point above it).
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { denoFromMise } from '../../buildpacks/node/src/mise.ts';
import { nodeConstraint } from '../../lib/js-project/node-version.ts';
import { readPackageJson } from '../../buildpacks/node/src/package-json.ts';
import { chooseTool } from '../../lib/js-project/build-tool.ts';
import { parsePackageManager } from '../../lib/js-project/package-manager-field.ts';
import { registryAuth } from '../../buildpacks/node/src/registry-auth.ts';
import { devToolError, installFailedError, staleLockfileError } from '../../buildpacks/node/src/dependencies.ts';
import { sshRefusedError } from '../../buildpacks/node/src/ssh-key.ts';
import { checkBerryLockfile, checkedInYarn, checkYarn1Fits, releaseVersion } from '../../buildpacks/node/src/yarn-project.ts';
import { checkPnpLoader, pnpFilesOf } from '../../buildpacks/node/src/pnp.ts';
import { enginesUnsatisfied, hashMismatch } from '../../lib/js-project/node-tools.ts';
import { composerFailedError } from '../../buildpacks/phpserver/src/composer.ts';
import { otherLineError } from '../../buildpacks/phpserver/src/server-install.ts';
import { keyValueAddon } from '../../buildpacks/phpserver/src/kv-addon.ts';
import { SERVER_VERSIONS } from '../../buildpacks/phpserver/src/server-version.ts';
import { cacheContent } from '../../buildpacks/static/src/build-cache.ts';
import { readConfig } from '../../buildpacks/static/src/config.ts';
import { checkSwsToml } from '../../buildpacks/static/src/server-choice.ts';
import { parseFlags } from '../../buildpacks/static/src/server.ts';
import { failed } from '../../buildpacks/static/src/site-build.ts';
import { mkdocsPrefix, unavailable } from '../../buildpacks/static/src/tools.ts';
import { appWith, ROOT, tmpDir } from '../helpers/rbp.ts';
import { quietLogger, rejectedUserError, stableRendering, thrownUserError } from '../helpers/user-error.ts';
import { UserError } from '../../lib/errors.ts';

/** The rendered error of a buildpack's bin/build (bundled, as rbp runs it) on `appDir`. */
function bundledBuildError(buildpack: string, appDir: string): string {
  const dir = tmpDir('rbp-errors-cnb-');
  for (const d of ['layers', 'platform']) fs.mkdirSync(path.join(dir, d));
  fs.writeFileSync(path.join(dir, 'plan.toml'), '');
  const bp = path.join(ROOT, 'dist', 'buildpacks', buildpack);
  let out = '';
  try {
    execFileSync(process.execPath, [path.join(bp, 'lib', 'build.cjs')], {
      cwd: appDir,
      env: {
        PATH: process.env.PATH ?? '',
        CNB_LAYERS_DIR: path.join(dir, 'layers'),
        CNB_PLATFORM_DIR: path.join(dir, 'platform'),
        CNB_BUILDPACK_DIR: bp,
        CNB_BP_PLAN_PATH: path.join(dir, 'plan.toml'),
      },
      encoding: 'utf8',
      stdio: 'pipe',
    });
  } catch (e) {
    out = `${(e as { stdout?: string }).stdout ?? ''}${(e as { stderr?: string }).stderr ?? ''}`;
  }
  // eslint-disable-next-line no-control-regex
  const lines = out.replace(/\x1b\[[0-9;]*m/g, '').split('\n');
  const start = lines.findIndex((l) => l.startsWith('! ERROR'));
  const end = lines.findIndex((l, i) => i > start && l.startsWith('! (error id:'));
  expect(start, out).toBeGreaterThan(-1);
  return lines
    .slice(start, end + 1)
    .join('\n')
    .replaceAll(appDir, '<app>');
}

describe('node', () => {
  // The bundled buildpack (npm run build, which npm test runs first).
  it('node/package-json/missing and node/start/none (after detect: the reference lifecycle may run build alone)', () => {
    expect(bundledBuildError('node', appWith({ 'index.html': '' }))).toMatchSnapshot();
    expect(bundledBuildError('node', appWith({ 'package.json': '{"name":"x"}' }))).toMatchSnapshot();
  });

  it('node/package-json/parse', () => {
    const dir = appWith({ 'package.json': '{"name": ' });
    expect(
      stableRendering(
        thrownUserError(() => readPackageJson(dir)),
        { [dir]: '<app>' },
      ),
    ).toMatchSnapshot();
  });

  it('node/version/engines-invalid', () => {
    expect(stableRendering(thrownUserError(() => nodeConstraint({ engines: { node: 'the latest one' } }, {})))).toMatchSnapshot();
  });

  it('node/package-manager/field-invalid', () => {
    expect(stableRendering(thrownUserError(() => parsePackageManager({ packageManager: 'pnpm@^10' })))).toMatchSnapshot();
  });

  it("node/build-tool/custom-missing: the example names the app's own manager", () => {
    const dir = appWith({ 'package.json': '{}' });
    expect(stableRendering(thrownUserError(() => chooseTool(dir, undefined, { CC_NODE_BUILD_TOOL: 'custom' })))).toMatchSnapshot();
    const pnpm = appWith({ 'package.json': '{}', 'pnpm-lock.yaml': "lockfileVersion: '9.0'\n" });
    const rendered = stableRendering(thrownUserError(() => chooseTool(pnpm, undefined, { CC_NODE_BUILD_TOOL: 'custom' })));
    expect(rendered).toContain('CC_CUSTOM_BUILD_TOOL="pnpm install --frozen-lockfile && pnpm run build"');
    expect(rendered).toMatchSnapshot();
  });

  it('node/package-manager/engines-unsatisfied: pnpm, and the Yarn 1 line', () => {
    expect(stableRendering(enginesUnsatisfied({ field: 'engines.pnpm', label: 'pnpm' }, '^99.0.0', 'pnpm', '10.12.1', '/app/package.json'))).toMatchSnapshot();
    expect(stableRendering(enginesUnsatisfied({ field: 'engines.yarn', label: 'Yarn 1' }, '1.99.x', 'yarn', '1.22.22', '/app/package.json'))).toMatchSnapshot();
  });

  it('node/mise/parse and node/mise/deno-version', () => {
    const bad = appWith({ 'mise.toml': '[tools\ndeno = "2"' });
    expect(
      stableRendering(
        thrownUserError(() => denoFromMise(bad)),
        { [bad]: '<app>' },
      ),
    ).toMatchSnapshot();
    const noVersion = appWith({ 'mise.toml': '[tools]\ndeno = ""\n' });
    expect(
      stableRendering(
        thrownUserError(() => denoFromMise(noVersion)),
        { [noVersion]: '<app>' },
      ),
    ).toMatchSnapshot();
  });

  it('the registry settings: config/CC_NPM_REGISTRY/invalid, config/CC_NPM_BASIC_AUTH/invalid, node/registry/both-auth', () => {
    expect(stableRendering(thrownUserError(() => registryAuth({ CC_NPM_REGISTRY: 'ftp://npm.example.com' })))).toMatchSnapshot();
    const basic = stableRendering(thrownUserError(() => registryAuth({ CC_NPM_BASIC_AUTH: 'no-colon-s3cret' })));
    expect(basic).not.toContain('s3cret');
    expect(basic).toMatchSnapshot();
    const both = stableRendering(thrownUserError(() => registryAuth({ NPM_TOKEN: 't0ken', CC_NPM_BASIC_AUTH: 'u:p4ss' })));
    expect(both).not.toMatch(/t0ken|p4ss/);
    expect(both).toMatchSnapshot();
  });

  it('node/ssh-key/refused', () => {
    expect(stableRendering(sshRefusedError([], '/platform/bindings', 'npm ci'))).toMatchSnapshot();
  });

  it('node/lockfile/out-of-date, node/dev-dependencies/needed, node/install/failed and node/install-script/failed', () => {
    expect(stableRendering(staleLockfileError('/app', { lock: 'package-lock.json', local: 'npm install' }, 'npm ci'))).toMatchSnapshot();
    expect(stableRendering(devToolError('/app', { command: 'tsc', dependency: 'typescript' }, 'tsc -p .', 'postinstall'))).toMatchSnapshot();
    expect(stableRendering(installFailedError('install', '/app', 'npm ci', 'exit 1 after 2300ms'))).toMatchSnapshot();
    expect(stableRendering(installFailedError('postinstall', '/app', 'node setup.js', 'exit 2 after 120ms'))).toMatchSnapshot();
  });

  it('node/package-manager/hash-mismatch', () => {
    const e = hashMismatch(
      { id: 'pnpm', constraint: '10.0.0', origin: { what: 'packageManager' }, hash: { algorithm: 'sha512', hex: 'ab'.repeat(64) } },
      '10.0.0',
      'sha512.cd…',
    );
    expect(stableRendering(e)).toMatchSnapshot();
  });
});

describe('node, Yarn, Plug-n-Play and apps from other platforms', () => {
  const berryLock = (v: number) => `__metadata:\n  version: ${v}\n  cacheKey: 8\n`;

  it('node/package-json/missing with a server.js: the two-line package.json to add', () => {
    expect(bundledBuildError('node', appWith({ 'server.js': '' }))).toMatchSnapshot();
  });

  it('node/yarn/berry-project-on-yarn1', () => {
    const dir = appWith({ 'yarn.lock': berryLock(4), '.yarnrc.yml': 'nodeLinker: node-modules\n', 'package.json': '{}' });
    const choice = { tool: 'yarn', manager: 'yarn', because: 'yarn.lock' } as const;
    expect(
      stableRendering(
        thrownUserError(() => checkYarn1Fits(choice, undefined, dir, { engines: { yarn: '2.4.x' } }, '1.22.22')),
        { [dir]: '<app>' },
      ),
    ).toMatchSnapshot();
  });

  it('node/yarn/lockfile-version', () => {
    const dir = appWith({ 'yarn.lock': berryLock(6) });
    expect(
      stableRendering(
        thrownUserError(() => checkBerryLockfile(dir, {}, '4.18.1', { from: 'default', shown: 'latest packaged Yarn 4.x' })),
        { [dir]: '<app>' },
      ),
    ).toMatchSnapshot();
  });

  it('node/yarn/release-missing and node/yarn/release-unusable', () => {
    const missing = appWith({ '.yarnrc.yml': 'yarnPath: .yarn/releases/yarn-3.8.7.cjs\n' });
    expect(
      stableRendering(
        thrownUserError(() => checkedInYarn(missing, releaseVersion)),
        { [missing]: '<app>' },
      ),
    ).toMatchSnapshot();
    const broken = appWith({ '.yarnrc.yml': 'yarnPath: .yarn/releases/yarn.cjs\n', '.yarn/releases/yarn.cjs': 'console.log("not a version")\n' });
    expect(
      stableRendering(
        thrownUserError(() => checkedInYarn(broken, releaseVersion)),
        { [broken]: '<app>' },
      ),
    ).toMatchSnapshot();
  });

  it('node/pnp/loader-node-incompatible', () => {
    const dir = appWith({ '.pnp.cjs': '', '.pnp.loader.mjs': '// a loader of Yarn 4.12.0: no EBADF gate\n' });
    expect(
      stableRendering(
        thrownUserError(() =>
          checkPnpLoader(pnpFilesOf(dir), '24.15.0', { version: '4.12.0', because: 'packageManager yarn@4.12.0' }, 'the default, the latest LTS'),
        ),
      ),
    ).toMatchSnapshot();
  });
});

describe('static', () => {
  it('static/buildcache/empty', () => {
    const dir = appWith({ 'index.html': '' });
    expect(
      stableRendering(thrownUserError(() => cacheContent({ appDir: dir, autoBuild: false, webrootSet: false, webroot: '', override: ' : ', configFiles: [] }))),
    ).toMatchSnapshot();
  });

  it('config/CC_STATIC_AUTOBUILD_OUTDIR/invalid (the root)', () => {
    const dir = appWith({ 'index.html': '' });
    expect(stableRendering(thrownUserError(() => readConfig({ CC_STATIC_AUTOBUILD_OUTDIR: '/' }, dir)))).toMatchSnapshot();
  });

  it('static/sws-toml/parse', () => {
    const dir = appWith({ 'sws.toml': '[general\nport = 1' });
    expect(stableRendering(thrownUserError(() => checkSwsToml(dir, quietLogger())))).toMatchSnapshot();
  });

  it('static/flags/invalid', () => {
    expect(stableRendering(thrownUserError(() => parseFlags('--log-level info | tee log')))).toMatchSnapshot();
  });

  it('static/generator/failed', () => {
    expect(stableRendering(failed('hugo --minify', 'hugo --minify --destination cc_static_autobuilt', { status: 'exit 255' }))).toMatchSnapshot();
  });

  it('static/tool/unavailable and static/mkdocs/unavailable', async () => {
    const cause = new UserError({
      id: 'deps/download-failed',
      title: 'Could not download hugo 0.149.1',
      seen: { what: 'URL', value: 'https://example.invalid/hugo.tar.gz' },
      rule: 'r',
      fix: 'f',
      details: ['getaddrinfo ENOTFOUND example.invalid'],
    });
    expect(
      stableRendering(
        unavailable(
          { id: 'hugo', label: 'Hugo', constraint: '0.149', launch: false, versionArgs: ['version'], purpose: 'Hugo sites (hugo.toml) are built with hugo' },
          cause,
        ),
      ),
    ).toMatchSnapshot();
    expect(stableRendering(await rejectedUserError(mkdocsPrefix({ PATH: '/nonexistent-bin' }, quietLogger())))).toMatchSnapshot();
  });
});

describe('phpserver', () => {
  it("phpserver/server/php-line: the operator's server runs a PHP of another line than the one selected", () => {
    expect(stableRendering(otherLineError(SERVER_VERSIONS['8.5'], 'RBP_TOOL_FRANKENPHP', '/opt/frankenphp/bin/frankenphp', '8.4.11'))).toMatchSnapshot();
    expect(stableRendering(otherLineError(SERVER_VERSIONS.default, 'RBP_TOOL_FRANKENPHP', '/opt/frankenphp/bin/frankenphp', '8.2.29'))).toMatchSnapshot();
  });
  it('config/KV_PORT/invalid and config/KV_HOST/invalid: the key-value add-on is tcp on port 6378 only', () => {
    expect(stableRendering(thrownUserError(() => keyValueAddon({ KV_HOST: 'kv.example.internal', KV_PORT: '6379', KV_TOKEN: 'kv-secret' })))).toMatchSnapshot();
    expect(stableRendering(thrownUserError(() => keyValueAddon({ KV_HOST: 'unix:///run/redis/redis.sock', KV_PORT: '6378' })))).toMatchSnapshot();
    expect(keyValueAddon({ KV_HOST: 'tcp://kv.example.internal', KV_PORT: '6378', KV_TOKEN: 'kv-secret' })).toBe(
      'key-value add-on: kv.example.internal:6378 over tcp, KV_TOKEN as the redis password (PHP reaches it through the redis extension)',
    );
    expect(keyValueAddon({})).toBeUndefined();
  });
  it('phpserver/composer/install-failed', () => {
    expect(
      stableRendering(
        composerFailedError('composer install --no-interaction --no-progress --no-scripts --no-dev', '/workspace', 'exit 2', [
          'Your requirements could not be resolved to an installable set of packages.',
        ]),
      ),
    ).toMatchSnapshot();
  });
});
