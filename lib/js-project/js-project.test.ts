/**
 * What node and static share about a JavaScript project: the packageManager field, the lock-file
 * order (contract, node rule 5), the install command table (rules 4 and 8), the lock digest, and what
 * the app's own commands get (a custom command's dev-dependency variables, a fix's build command,
 * node-gyp's headers).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { VARIABLES } from '../config/variables.ts';
import { renderUserError, type UserError } from '../errors.ts';
import { BUILD_TOOLS, chooseTool, DEPRECATED_BUILD_TOOLS, type ToolChoice } from './build-tool.ts';
import { devDependenciesChoice, installCommand } from './install-command.ts';
import { lockDigest } from './lock-digest.ts';
import { detectFromLockFiles, lockFileOf, yarnPathOf } from './lock-files.ts';
import { packageManagerIfValid, parsePackageManager } from './package-manager-field.ts';
import { nativeModulesEnv } from './npm-env.ts';
import { buildCommandExample } from './package-managers.ts';

function app(files: string[] | Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-js-project-'));
  const entries = Array.isArray(files) ? files.map((f) => [f, ''] as const) : Object.entries(files);
  for (const [f, c] of entries) fs.writeFileSync(path.join(dir, f), c);
  return dir;
}

function errorOf(fn: () => unknown): UserError {
  try {
    fn();
  } catch (e) {
    return e as UserError;
  }
  throw new Error('no error');
}

const yarn4 = { name: 'yarn', version: '4.9.1' } as const;

describe('chooseTool (contract, node rule 5)', () => {
  it('follows the lock file priority yarn.lock → pnpm-lock.yaml → bun.lock, else npm', () => {
    expect(chooseTool(app(['yarn.lock', 'pnpm-lock.yaml', 'bun.lock']), undefined, {}).tool).toBe('yarn');
    expect(chooseTool(app(['pnpm-lock.yaml', 'bun.lock']), undefined, {}).tool).toBe('pnpm');
    expect(chooseTool(app(['bun.lock', 'package-lock.json']), undefined, {}).tool).toBe('bun');
    expect(chooseTool(app(['package-lock.json']), undefined, {}).tool).toBe('npm');
  });
  it('takes Yarn Berry with yarn.lock and packageManager yarn@3 or yarn@4; Yarn 1 and 2 are deprecated', () => {
    expect(chooseTool(app(['yarn.lock']), yarn4, {}).tool).toBe('yarn-berry');
    expect(chooseTool(app(['yarn.lock']), { name: 'yarn', version: '3.8.7' }, {}).tool).toBe('yarn-berry');
    expect(chooseTool(app(['yarn.lock']), { name: 'yarn', version: '2.4.3' }, {}).deprecated).toMatch(/Yarn 2.x is deprecated/);
    expect(chooseTool(app(['yarn.lock']), undefined, {}).deprecated).toMatch(/Yarn 1.x is deprecated/);
  });
  it('keeps rule 5 as written when yarnPath pins a release: the tool is Yarn 1 (the release runs once Berry is chosen)', () => {
    const dir = app({ 'yarn.lock': '', '.yarnrc.yml': 'nodeLinker: node-modules\nyarnPath: .yarn/releases/yarn-3.8.7.cjs\n' });
    expect(yarnPathOf(dir)).toEqual({ file: '.yarn/releases/yarn-3.8.7.cjs', version: '3.8.7' });
    expect(yarnPathOf(app({ 'yarn.lock': '', '.yarnrc.yml': "yarnPath: '.yarn/releases/yarn-berry.cjs'\n" }))).toEqual({
      file: '.yarn/releases/yarn-berry.cjs',
    });
    expect(chooseTool(dir, undefined, {})).toMatchObject({ tool: 'yarn', manager: 'yarn' });
    expect(chooseTool(dir, undefined, { CC_NODE_BUILD_TOOL: 'yarn-berry' })).toMatchObject({ tool: 'yarn-berry', manager: 'yarn-berry' });
    expect(detectFromLockFiles(app({ 'yarn.lock': '', '.yarnrc.yml': 'nodeLinker: node-modules\n' }), undefined)?.tool).toBe('yarn');
  });
  it('CC_NODE_BUILD_TOOL wins over the lock files; whitespace is unset', () => {
    expect(chooseTool(app(['yarn.lock']), undefined, { CC_NODE_BUILD_TOOL: 'npm-ci' })).toMatchObject({
      tool: 'npm-ci',
      manager: 'npm',
      because: 'CC_NODE_BUILD_TOOL',
    });
    expect(chooseTool(app(['pnpm-lock.yaml']), undefined, { CC_NODE_BUILD_TOOL: '  ' })).toMatchObject({ tool: 'pnpm', because: 'pnpm-lock.yaml' });
  });
  it('maps each explicit value to its program (rule 4); the deprecated yarn and yarn2 warn', () => {
    const explicit = (value: string) => chooseTool(app(['pnpm-lock.yaml']), undefined, { CC_NODE_BUILD_TOOL: value });
    expect(explicit('bun')).toEqual({ tool: 'bun', manager: 'bun', because: 'CC_NODE_BUILD_TOOL' });
    expect(explicit('npm')).toEqual({ tool: 'npm', manager: 'npm', because: 'CC_NODE_BUILD_TOOL' });
    expect(explicit('npm-install')).toEqual({ tool: 'npm-install', manager: 'npm', because: 'CC_NODE_BUILD_TOOL' });
    expect(explicit('pnpm')).toEqual({ tool: 'pnpm', manager: 'pnpm', because: 'CC_NODE_BUILD_TOOL' });
    expect(explicit('yarn-berry')).toEqual({ tool: 'yarn-berry', manager: 'yarn-berry', because: 'CC_NODE_BUILD_TOOL' });
    expect(explicit('yarn')).toMatchObject({ tool: 'yarn', manager: 'yarn', deprecated: expect.stringMatching(/^Yarn 1\.x is deprecated/) });
    expect(explicit('yarn2')).toMatchObject({ tool: 'yarn2', manager: 'yarn-berry', deprecated: expect.stringMatching(/^Yarn 2\.x is deprecated/) });
  });
  it('custom takes CC_CUSTOM_BUILD_TOOL, and needs it', () => {
    expect(chooseTool(app([]), undefined, { CC_NODE_BUILD_TOOL: 'custom', CC_CUSTOM_BUILD_TOOL: ' npm ci && npm run build ' })).toMatchObject({
      tool: 'custom',
      manager: 'custom',
      command: 'npm ci && npm run build',
    });
    expect(errorOf(() => chooseTool(app([]), undefined, { CC_NODE_BUILD_TOOL: 'custom', CC_CUSTOM_BUILD_TOOL: ' ' })).id).toBe(
      'node/build-tool/custom-missing',
    );
  });
  it("refuses an unknown value as the variable's own error, listing the valid ones", () => {
    const e = errorOf(() => chooseTool(app([]), undefined, { CC_NODE_BUILD_TOOL: 'gradle' }));
    expect(e.id).toBe('config/CC_NODE_BUILD_TOOL/invalid');
    expect(renderUserError(e.data)).toContain('Rule: CC_NODE_BUILD_TOOL is one of bun, npm, npm-install, npm-ci, pnpm, yarn-berry, custom, yarn, yarn2');
  });
  it('knows the values lib/config declares, the deprecated ones apart', () => {
    const declared = VARIABLES.find((v) => v.name === 'CC_NODE_BUILD_TOOL')!.kind;
    expect(declared.type === 'enum' && [...declared.values].sort()).toEqual([...BUILD_TOOLS, ...DEPRECATED_BUILD_TOOLS].sort());
    expect(DEPRECATED_BUILD_TOOLS).toEqual(['yarn', 'yarn2']);
  });
});

describe('packageManager', () => {
  it('parses name, version and hash', () => {
    expect(parsePackageManager({ packageManager: 'pnpm@10.12.1+sha512.ABCdef' })).toEqual({
      name: 'pnpm',
      version: '10.12.1',
      hash: { algorithm: 'sha512', hex: 'abcdef' },
    });
    expect(parsePackageManager({})).toBeUndefined();
  });
  it('refuses a range; packageManagerIfValid counts it as absent', () => {
    expect(errorOf(() => parsePackageManager({ packageManager: 'pnpm@^10' })).id).toBe('node/package-manager/field-invalid');
    expect(packageManagerIfValid({ packageManager: 'pnpm@^10' })).toBeUndefined();
    expect(packageManagerIfValid({ packageManager: 'yarn@4.9.1' })).toEqual(yarn4);
  });
});

describe('installCommand (contract, node rules 4 and 8)', () => {
  const c = (tool: string) => ({ tool, manager: tool.startsWith('npm') ? 'npm' : tool === 'yarn2' ? 'yarn-berry' : tool, because: 'x' }) as ToolChoice;
  const node = (choice: 'install' | 'ignore' | 'unset', nodeEnv: string) => ({ dev: { choice, nodeEnv }, unattended: true });
  it('reads CC_NODE_DEV_DEPENDENCIES through lib/config', () => {
    expect(devDependenciesChoice({})).toBe('unset');
    expect(devDependenciesChoice({ CC_NODE_DEV_DEPENDENCIES: ' install ' })).toBe('install');
    expect(errorOf(() => devDependenciesChoice({ CC_NODE_DEV_DEPENDENCIES: 'yes' })).id).toBe('config/CC_NODE_DEV_DEPENDENCIES/invalid');
  });
  it('adds the explicit flag with CC_NODE_DEV_DEPENDENCIES=install', () => {
    expect(installCommand(c('npm'), node('install', 'production')).argv).toEqual(['npm', 'install', '--production=false', '--no-audit', '--no-fund']);
    expect(installCommand(c('npm-ci'), node('install', 'production')).argv).toEqual(['npm', 'ci', '--include=dev', '--no-audit', '--no-fund']);
    expect(installCommand(c('pnpm'), node('install', 'production')).argv).toEqual(['pnpm', 'install', '--prod', 'false']);
    expect(installCommand(c('yarn'), node('install', 'production')).argv).toEqual(['yarn', 'install', '--non-interactive', '--production=false']);
    expect(installCommand(c('bun'), node('install', 'production'))).toEqual({ argv: ['bun', 'install'], dev: 'included' });
  });
  it('unset or ignore: Bun omits dev always, the others with NODE_ENV=production', () => {
    expect(installCommand(c('bun'), node('unset', 'development'))).toEqual({ argv: ['bun', 'install', '--omit', 'dev'], dev: 'excluded' });
    expect(installCommand(c('npm'), node('ignore', 'production'))).toEqual({ argv: ['npm', 'install', '--no-audit', '--no-fund'], dev: 'excluded' });
    expect(installCommand(c('npm'), node('unset', 'development')).dev).toBe('included');
    expect(installCommand(c('pnpm'), node('unset', 'production')).argv).toEqual(['pnpm', 'install', '--prod']);
    expect(installCommand(c('pnpm'), node('unset', 'development')).argv).toEqual(['pnpm', 'install']);
    expect(installCommand(c('yarn'), node('unset', 'production')).argv).toEqual(['yarn', 'install', '--non-interactive']);
    expect(installCommand(c('yarn-berry'), node('unset', 'production'))).toEqual({
      argv: ['yarn', 'install'],
      then: ['yarn', 'workspaces', 'focus', '--all', '--production'],
      dev: 'excluded',
    });
  });
  it('installs in each tool CI mode when a lock file is there', () => {
    const locked = (choice: 'unset', nodeEnv: string, berryMajor?: number) => ({
      ...node(choice, nodeEnv),
      locked: true,
      ...(berryMajor ? { berryMajor } : {}),
    });
    expect(installCommand(c('pnpm'), locked('unset', 'production')).argv).toEqual(['pnpm', 'install', '--prod', '--frozen-lockfile']);
    expect(installCommand(c('yarn'), locked('unset', 'production')).argv).toEqual(['yarn', 'install', '--non-interactive', '--frozen-lockfile']);
    expect(installCommand(c('bun'), locked('unset', 'production')).argv).toEqual(['bun', 'install', '--omit', 'dev', '--frozen-lockfile']);
    const berry3 = installCommand(c('yarn-berry'), locked('unset', 'production', 3));
    expect(berry3).toEqual({ argv: ['yarn', 'install', '--immutable'], berryStripDev: true, dev: 'excluded' });
    expect(installCommand(c('yarn2'), locked('unset', 'production', 2)).berryStripDev).toBe(true);
  });
  it('custom runs CC_CUSTOM_BUILD_TOOL through the shell', () => {
    expect(installCommand({ tool: 'custom', manager: 'custom', because: 'x', command: 'make deps' }, node('unset', 'production'))).toEqual({
      argv: ['/bin/sh', '-c', 'make deps'],
      dev: 'excluded',
    });
  });
  it('without dev-dependency settings (static) adds no dev flag and nothing unattended', () => {
    expect(installCommand(c('bun'), { locked: true })).toEqual({ argv: ['bun', 'install', '--frozen-lockfile'], dev: 'included' });
    expect(installCommand(c('yarn'), { locked: true }).argv).toEqual(['yarn', 'install', '--frozen-lockfile']);
    expect(installCommand(c('yarn-berry'), { locked: true })).toEqual({ argv: ['yarn', 'install', '--immutable'], dev: 'included' });
    expect(installCommand(c('npm-ci'), { locked: true }).argv).toEqual(['npm', 'ci']);
  });
});

describe('lock files and their digest', () => {
  it('names the lock file each manager reads', () => {
    const dir = app(['package-lock.json', 'npm-shrinkwrap.json', 'bun.lockb']);
    expect(lockFileOf(dir, 'npm')).toBe('npm-shrinkwrap.json');
    expect(lockFileOf(dir, 'bun')).toBe('bun.lockb');
    expect(lockFileOf(dir, 'pnpm')).toBeUndefined();
  });
  it('digests the content: same content, same key', () => {
    const a = app({ 'yarn.lock': 'a@1' });
    const b = app({ 'yarn.lock': 'a@1' });
    const c = app({ 'yarn.lock': 'a@2' });
    expect(lockDigest(path.join(a, 'yarn.lock'))).toMatch(/^[0-9a-f]{16}$/);
    expect(lockDigest(path.join(a, 'yarn.lock'))).toBe(lockDigest(path.join(b, 'yarn.lock')));
    expect(lockDigest(path.join(a, 'yarn.lock'))).not.toBe(lockDigest(path.join(c, 'yarn.lock')));
  });
});

describe("what an app's own commands get", () => {
  it('a custom command with CC_NODE_DEV_DEPENDENCIES=install: the variables that make the installs of the managers on its PATH include them', () => {
    const custom: ToolChoice = { tool: 'custom', manager: 'custom', because: 'CC_NODE_BUILD_TOOL', command: 'yarn install && yarn build' };
    const dev = (choice: 'install' | 'unset', onPath: ('npm' | 'pnpm' | 'yarn' | 'yarn-berry' | 'bun')[]) =>
      installCommand(custom, { dev: { choice, nodeEnv: 'production' }, onPath });
    expect(dev('install', ['npm', 'yarn'])).toEqual({
      argv: ['/bin/sh', '-c', 'yarn install && yarn build'],
      dev: 'included',
      env: { npm_config_include: 'dev', YARN_PRODUCTION: 'false' },
    });
    expect(dev('install', ['npm', 'pnpm', 'yarn-berry', 'bun']).env).toEqual({ npm_config_include: 'dev', npm_config_production: 'false' });
    expect(dev('unset', ['npm', 'yarn'])).toEqual({ argv: ['/bin/sh', '-c', 'yarn install && yarn build'], dev: 'excluded' });
  });

  it('the build command a fix suggests is the manager’s own, in its frozen mode with a lock file', () => {
    expect(buildCommandExample('npm', false)).toBe('npm install && npm run build');
    expect(buildCommandExample('npm', true)).toBe('npm ci && npm run build');
    expect(buildCommandExample('pnpm', true)).toBe('pnpm install --frozen-lockfile && pnpm run build');
    expect(buildCommandExample('yarn', true)).toBe('yarn install --frozen-lockfile && yarn run build');
    expect(buildCommandExample('yarn-berry', true)).toBe('yarn install --immutable && yarn run build');
    expect(buildCommandExample('bun', false)).toBe('bun install && bun run build');
    expect(buildCommandExample('custom', false)).toBe('npm install && npm run build');
  });

  it('native modules: node-gyp gets the headers beside the Node.js installed, and npm’s node-gyp', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-native-'));
    const node = path.join(root, 'node');
    const npm = path.join(root, 'npm');
    for (const d of [path.join(node, 'bin'), path.join(node, 'include', 'node'), path.join(npm, 'bin', 'node-gyp-bin')]) fs.mkdirSync(d, { recursive: true });
    for (const f of [path.join(node, 'bin', 'node'), path.join(node, 'include', 'node', 'common.gypi'), path.join(npm, 'bin', 'npm-cli.js')])
      fs.writeFileSync(f, '');
    fs.writeFileSync(path.join(npm, 'bin', 'node-gyp-bin', 'node-gyp'), '');
    fs.symlinkSync('npm-cli.js', path.join(npm, 'bin', 'npm'));
    expect(nativeModulesEnv(path.join(node, 'bin', 'node'), path.join(npm, 'bin', 'npm'))).toEqual({
      env: { npm_config_nodedir: node },
      path: [path.join(npm, 'bin', 'node-gyp-bin')],
      nodedir: node,
    });
    // A Node.js without its headers (an operator's binary): node-gyp is left to its own ways.
    fs.rmSync(path.join(node, 'include'), { recursive: true });
    expect(nativeModulesEnv(path.join(node, 'bin', 'node'), undefined)).toEqual({ env: {}, path: [] });
  });
});
