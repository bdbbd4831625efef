/**
 * Dependencies of the JavaScript generators. The contract writes `npm i`; with a lock file the
 * project's own lock decides instead (npm ci, pnpm or Yarn through corepack, Bun), so the build gets
 * the versions the project tested. Between builds, node_modules is kept in a cache layer keyed on the
 * lock file (or package.json) and the Node.js version (js-runtime.ts): when neither changed, the install is skipped.
 * npm's download cache is a second cache layer, so a changed lock file still installs from disk.
 */
import { moveAcross, readJsonIfAny } from '../../../lib/fsx.ts';
import fs from 'node:fs';
import path from 'node:path';
import type { Layers } from '../../../lib/cnb/layers.ts';
import { installCommand } from '../../../lib/js-project/install-command.ts';
import { lockDigest } from '../../../lib/js-project/lock-digest.ts';
import { detectFromLockFiles, lockFileOf, yarnPathOf } from '../../../lib/js-project/lock-files.ts';
import { packageManagerIfValid } from '../../../lib/js-project/package-manager-field.ts';
import { DEFAULT_MANAGER, PACKAGE_MANAGERS } from '../../../lib/js-project/package-managers.ts';
import { CONTRACT_INSTALL } from './generators.ts';

export interface InstallPlan {
  argv: string[];
  /** The lock file that decided, or undefined (`npm i`). */
  lockFile: string | undefined;
}

/**
 * The install command for the project's lock file; `npm i` (the contract's) without one. Lock files
 * count in the node runtime's order and Yarn Berry is told apart as node does (lib/js-project), npm's
 * own lock last, so a project installs the same way under both runtimes. Always in the tool's CI
 * mode, dev dependencies included (a generator is usually one); Yarn and pnpm through corepack,
 * which runs the version packageManager names.
 */
export function installPlan(appDir: string): InstallPlan {
  const detected = detectFromLockFiles(appDir, packageManagerIfValid(readJsonIfAny<Record<string, unknown>>(path.join(appDir, 'package.json')) ?? {}));
  // Yarn 1 (corepack's default) hands over to a release checked in at yarnPath: Berry's flags then.
  const handover = detected && yarnPathOf(appDir) ? PACKAGE_MANAGERS[detected.manager].yarnPathRunsAs : undefined;
  const found = handover ? { ...detected!, tool: PACKAGE_MANAGERS[handover].buildTools[0]!.name, manager: handover } : detected;
  if (found) {
    const { argv } = installCommand({ tool: found.tool, manager: found.manager, because: found.because }, { locked: true });
    return { argv: PACKAGE_MANAGERS[found.manager].corepack ? ['corepack', ...argv] : argv, lockFile: lockFileOf(appDir, found.manager) };
  }
  // No lock file that picks a manager: npm, in its clean-install mode (its last build tool, npm ci) with its own lock, else the contract's `npm i`.
  const npm = PACKAGE_MANAGERS[DEFAULT_MANAGER];
  const npmLock = lockFileOf(appDir, DEFAULT_MANAGER);
  const clean = npm.buildTools.find((t) => t.install)!;
  if (npmLock) return { argv: installCommand({ tool: clean.name, manager: DEFAULT_MANAGER, because: npmLock }, { locked: true }).argv, lockFile: npmLock };
  return { argv: CONTRACT_INSTALL, lockFile: undefined };
}

export interface NodeModulesCache {
  /** Whether node_modules was put back from the cache (the install can be skipped). */
  restored: boolean;
  reason: string;
  /** Moves the app's node_modules into the cache layer for the next build. */
  keep: () => void;
}

/**
 * Restores node_modules from the `node_modules` cache layer when the lock file (or package.json),
 * the install command and the Node.js version are what they were; otherwise the layer starts empty.
 * Folders are moved, never copied (a copy only where a platform mounts the app and the layers apart).
 */
export function nodeModulesCache(layers: Layers, appDir: string, plan: InstallPlan, node: string): NodeModulesCache {
  const keyFile = plan.lockFile ?? 'package.json';
  const keyPath = path.join(appDir, keyFile);
  const metadata = {
    install: plan.argv.join(' '),
    [keyFile]: fs.existsSync(keyPath) ? lockDigest(keyPath) : 'absent',
    node: `v${node}`,
  };
  const layer = layers.get('node_modules', { cache: true }, metadata);
  const cached = path.join(layer.path, 'node_modules');
  const own = path.join(appDir, 'node_modules');
  let restored = false;
  let reason = layer.reason;
  if (fs.existsSync(own)) {
    reason = 'the project has its own node_modules';
  } else if (layer.state === 'reused' && fs.existsSync(cached)) {
    moveAcross(cached, own);
    restored = true;
    reason = `${keyFile} unchanged`;
  }
  return {
    restored,
    reason,
    keep: () => {
      if (!fs.existsSync(own)) return;
      fs.rmSync(cached, { recursive: true, force: true });
      moveAcross(own, cached);
    },
  };
}

/** npm's download cache, kept between builds whatever changed. */
export function npmCacheDir(layers: Layers): string {
  const layer = layers.get('npm-cache', { cache: true }, { tool: PACKAGE_MANAGERS[DEFAULT_MANAGER].tool!.id });
  return layer.path;
}
