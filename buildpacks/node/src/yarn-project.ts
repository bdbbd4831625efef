/**
 * Which Yarn runs, and whether the project fits it. The contract picks the tool (node rule 5) and
 * the default version (rule 7); on top of that, as every Yarn does itself, a release checked in at
 * `yarnPath` (.yarnrc.yml) is the Yarn that runs, started from the app, never looked up in the
 * registry. Before anything installs, the build refuses what would fail late inside `yarn install`:
 * - a Berry project (Berry lock file, engines.yarn beyond 1.x, a Berry release at yarnPath) that
 *   rule 5 leaves to Yarn 1;
 * - a yarn.lock whose lockfile version is not the one the Yarn that runs writes: the immutable
 *   install (`--immutable`) refuses to rewrite it.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import semver from 'semver';
import { UserError } from '../../../lib/errors.ts';
import { LOCK_FILES, yarnPathOf, type CheckedInYarn } from '../../../lib/js-project/lock-files.ts';
import type { ToolChoice } from '../../../lib/js-project/build-tool.ts';
import type { PackageManagerField } from '../../../lib/js-project/package-manager-field.ts';
import { fieldNames, PACKAGE_MANAGERS } from '../../../lib/js-project/package-managers.ts';

/** The part of package.json read here. */
type Engines = { engines?: Record<string, unknown> };

/**
 * The lockfile version (`__metadata.version` of yarn.lock) each Berry release writes, measured by
 * running each release's `yarn install` in a new project; `newest` is the last release writing it.
 * A Yarn outside these ranges (a newer release, a prerelease) is not judged.
 */
export const BERRY_LOCKFILE_VERSIONS: readonly { yarn: string; lockfile: number; newest: string }[] = [
  { yarn: '>=2.0.0 <3.1.0', lockfile: 4, newest: '3.0.2' },
  { yarn: '>=3.1.0 <3.2.0', lockfile: 5, newest: '3.1.1' },
  { yarn: '>=3.2.0 <4.0.0', lockfile: 6, newest: '3.8.7' },
  { yarn: '>=4.0.0 <4.14.0', lockfile: 8, newest: '4.13.0' },
  { yarn: '>=4.14.0 <4.15.0', lockfile: 9, newest: '4.14.1' },
  { yarn: '>=4.15.0 <=4.18.1', lockfile: 10, newest: '4.18.1' },
];

/** The lockfile version `yarn` writes, when known. */
export function lockfileVersionOf(yarn: string): number | undefined {
  return BERRY_LOCKFILE_VERSIONS.find((r) => semver.satisfies(yarn, r.yarn))?.lockfile;
}

/** The Yarn releases that write lockfile version `v`, for messages: `Yarn 3.2 to 3.8`. */
function writersOf(v: number): { shown: string; newest: string } | undefined {
  const r = BERRY_LOCKFILE_VERSIONS.find((x) => x.lockfile === v);
  if (!r) return undefined;
  const min = semver.minVersion(r.yarn)!;
  const max = semver.parse(r.newest)!;
  return { shown: `Yarn ${min.major}.${min.minor} to ${max.major}.${max.minor}`, newest: r.newest };
}

/** yarn.lock's format: Yarn 1's, or Berry's with its lockfile version (`__metadata: version: 6`). */
export function yarnLockFormat(appDir: string): { berry: false } | { berry: true; version: number | undefined } | undefined {
  let head: string;
  try {
    head = fs.readFileSync(path.join(appDir, LOCK_FILES.yarn), 'utf8').slice(0, 4096);
  } catch {
    return undefined;
  }
  const meta = /^__metadata:\s*\n(?:[ \t]+.*\n)*?[ \t]+version:\s*["']?(\d+)/m.exec(`${head}\n`);
  if (meta) return { berry: true, version: Number(meta[1]) };
  if (/^__metadata:/m.test(head)) return { berry: true, version: undefined };
  return { berry: false };
}

/**
 * yarnPath's release, when .yarnrc.yml names one: the file must be in the app (a .gitignore of
 * `.yarn/*` without `!.yarn/releases` leaves it out of the repository). Its version is the one its
 * name carries (`yarn set version` writes `yarn-<version>.cjs`), else what it prints.
 */
export function checkedInYarn(appDir: string, runVersion: (file: string) => string | undefined): CheckedInYarn | undefined {
  const pinned = yarnPathOf(appDir);
  if (!pinned) return undefined;
  const abs = path.resolve(appDir, pinned.file);
  const inside = !path.relative(appDir, abs).startsWith('..');
  if (!inside || !fs.statSync(abs, { throwIfNoEntry: false })?.isFile()) {
    throw new UserError({
      id: 'node/yarn/release-missing',
      title: `yarnPath names ${pinned.file}, which is not in the application`,
      seen: { what: 'yarnPath in .yarnrc.yml', value: pinned.file, where: appDir },
      rule: 'Every Yarn runs the release yarnPath names instead of itself: that file must be committed in the project.',
      fix: `Commit ${pinned.file} (a .gitignore with .yarn/* needs !.yarn/releases), or remove yarnPath from .yarnrc.yml and name the Yarn with "packageManager" in package.json.`,
    });
  }
  const version = pinned.version ?? runVersion(abs);
  if (!version || !semver.valid(version)) {
    throw new UserError({
      id: 'node/yarn/release-unusable',
      title: `The Yarn release at yarnPath (${pinned.file}) does not say its version`,
      seen: { what: 'yarnPath in .yarnrc.yml', value: pinned.file, where: appDir },
      rule: 'The release yarnPath names is the Yarn that installs; `node <release> --version` must print its version.',
      fix: `Check the release in again with \`yarn set version <version>\` (it writes .yarn/releases/yarn-<version>.cjs and yarnPath), or remove yarnPath and name the Yarn with "packageManager" in package.json.`,
      ...(version ? { details: [`it printed: ${version.slice(0, 80)}`] } : {}),
    });
  }
  return { file: pinned.file, abs, version };
}

/**
 * What a Yarn release prints for `--version`, run by the Node.js running the build, in an empty
 * folder and told to ignore any yarnPath (it is the release itself); undefined when it fails.
 */
export function releaseVersion(file: string): string | undefined {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-yarn-version-'));
  try {
    return execFileSync(process.execPath, [file, '--version'], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: dir, YARN_IGNORE_PATH: '1', YARN_ENABLE_TELEMETRY: '0' },
      encoding: 'utf8',
      timeout: 60_000,
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
  } catch {
    return undefined;
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** What says a project is a Yarn Berry one, each as a phrase for the error; `decisive` ones make Yarn 1 fail. */
export function berryEvidence(appDir: string, pkg: Engines, yarn1: string): { decisive: string[]; supporting: string[] } {
  const decisive: string[] = [];
  const supporting: string[] = [];
  const lock = yarnLockFormat(appDir);
  if (lock?.berry) decisive.push(`yarn.lock is in Yarn Berry's format (__metadata${lock.version !== undefined ? `, lockfile version ${lock.version}` : ''})`);
  const engines = enginesYarn(pkg);
  // An engines range Yarn 1 was chosen by (yarn1 is that range, not a version) fits it.
  if (engines && semver.validRange(engines) && semver.valid(yarn1) && !semver.satisfies(yarn1, engines))
    decisive.push(`engines.yarn is "${engines}", which Yarn ${yarn1} does not satisfy`);
  const pinned = yarnPathOf(appDir);
  if (pinned && !(pinned.version && semver.major(pinned.version) < 2))
    decisive.push(`.yarnrc.yml has yarnPath ${pinned.file}${pinned.version ? ` (Yarn ${pinned.version})` : ''}`);
  else if (fs.existsSync(path.join(appDir, '.yarnrc.yml'))) supporting.push('.yarnrc.yml (Yarn Berry’s settings file; Yarn 1 reads .yarnrc)');
  return { decisive, supporting };
}

/** engines.yarn of package.json, when it is a string. */
function enginesYarn(pkg: Engines): string | undefined {
  return typeof pkg.engines?.yarn === 'string' ? pkg.engines.yarn.trim() || undefined : undefined;
}

/**
 * The Yarn a fix names, as `yarn@…` words: yarnPath's release, an exact engines.yarn, else the
 * newest release writing yarn.lock's lockfile version (when engines.yarn allows it), else
 * `yarn@<version>` with what the version must match.
 */
export function suggestedYarn(appDir: string, pkg: Engines, withRelease = true): string {
  const pinned = withRelease ? yarnPathOf(appDir)?.version : undefined;
  if (pinned) return `"yarn@${pinned}"`;
  const engines = enginesYarn(pkg);
  if (engines && semver.valid(engines)) return `"yarn@${engines}"`;
  const lock = yarnLockFormat(appDir);
  const wrote = lock?.berry && lock.version !== undefined ? writersOf(lock.version) : undefined;
  const range = engines && semver.validRange(engines) ? engines : undefined;
  if (wrote && (!range || semver.satisfies(wrote.newest, range))) return `"yarn@${wrote.newest}"`;
  const must = [
    ...(range ? [`matching engines.yarn "${range}"`] : []),
    ...(wrote && lock?.berry ? [`${wrote.shown} write yarn.lock's lockfile version ${lock.version}`] : []),
  ];
  return `"yarn@<version>"${must.length ? ` (${must.join('; ')})` : ''}`;
}

/**
 * Rule 5 gave Yarn 1 (no packageManager yarn@3/4, or CC_NODE_BUILD_TOOL=yarn) to a project that
 * only Yarn Berry installs: refused before anything is downloaded, naming the evidence and the fixes.
 */
export function checkYarn1Fits(choice: ToolChoice, pm: PackageManagerField | undefined, appDir: string, pkg: Engines, yarn1: string): void {
  if (PACKAGE_MANAGERS[choice.manager].yarn !== 'classic') return;
  const { decisive, supporting } = berryEvidence(appDir, pkg, yarn1);
  if (decisive.length === 0) return;
  const pinned = yarnPathOf(appDir);
  const yarn = suggestedYarn(appDir, pkg);
  const version = /^"yarn@([^"]+)"/.exec(yarn)![1]!;
  const why =
    choice.because === 'CC_NODE_BUILD_TOOL'
      ? 'CC_NODE_BUILD_TOOL=yarn asks for Yarn 1'
      : 'a yarn.lock without packageManager yarn@3 or yarn@4 gets Yarn 1 (contract, node rule 5)';
  throw new UserError({
    id: 'node/yarn/berry-project-on-yarn1',
    title: `This is a Yarn Berry project, but Yarn ${yarn1} would install it`,
    seen: { what: 'the project', value: [...decisive, ...supporting].join('; '), where: appDir },
    rule: `${why}${pm && fieldNames(pm, choice.manager) ? ` (packageManager ${pm.name}@${pm.version})` : ''}; Yarn 1 cannot install a Yarn Berry project: it fails inside \`yarn install\`.`,
    fix:
      `Name the Yarn in package.json, "packageManager": ${yarn}, ` +
      `or set CC_NODE_BUILD_TOOL=yarn-berry with the release checked in (${pinned ? `${pinned.file} is: that alone is enough` : `\`yarn set version ${version}\` writes .yarn/releases/ and yarnPath; commit them`}).`,
  });
}

/** Where the Yarn that runs comes from, for messages. */
export type YarnOrigin = 'packageManager' | 'yarnPath' | 'default';

/**
 * Yarn Berry `yarn` will install from a yarn.lock of another lockfile version: the immutable install
 * would rewrite it, and refuses. Checked before installing, once the version that runs is known.
 */
export function checkBerryLockfile(appDir: string, pkg: Engines, yarn: string, origin: { from: YarnOrigin; shown: string }): void {
  const lock = yarnLockFormat(appDir);
  if (!lock?.berry || lock.version === undefined) return;
  const writes = lockfileVersionOf(yarn);
  const wrote = writersOf(lock.version);
  if (writes === undefined || !wrote || writes === lock.version) return;
  const older = lock.version < writes;
  // Not yarnPath's release: it is the one that does not fit.
  const wanted = suggestedYarn(appDir, pkg, false);
  throw new UserError({
    id: 'node/yarn/lockfile-version',
    title: `yarn.lock was written by ${older ? 'an older' : 'a newer'} Yarn than ${yarn}, which would rewrite it`,
    seen: {
      what: 'yarn.lock',
      value: `lockfile version ${lock.version} (${wrote.shown}); Yarn ${yarn} (${origin.shown}) writes version ${writes}`,
      where: appDir,
    },
    rule: 'With a lock file the install is immutable (`yarn install --immutable`): the Yarn that runs must not have to rewrite yarn.lock, and one of another lockfile version it always rewrites.',
    fix:
      `Run the Yarn that wrote it: "packageManager": ${wanted} in package.json${origin.from === 'yarnPath' ? ' (and remove yarnPath from .yarnrc.yml, or check that release in instead)' : ''}; ` +
      `or run \`yarn install\` with Yarn ${yarn} locally and commit the rewritten yarn.lock.`,
  });
}
