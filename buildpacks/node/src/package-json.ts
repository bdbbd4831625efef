/**
 * package.json: the one file every node app has (contract, node rule 1). It is read once, checked for
 * the fields the buildpack uses, and turned into the start method (CC_RUN_COMMAND > scripts.start >
 * main).
 */
import fs from 'node:fs';
import path from 'node:path';
import { jsonDepth, MAX_JSON_DEPTH } from '../../../lib/json-depth.ts';
import { UserError } from '../../../lib/errors.ts';
import { readProcfile, type Procfile } from './procfile.ts';
import { isSet, value } from '../../../lib/config/read.ts';
import { findIndex, INDEX_FILES } from '../../../lib/app-path.ts';

export interface PackageJson {
  name?: string;
  version?: string;
  main?: string;
  scripts?: Record<string, string>;
  engines?: { node?: string };
  packageManager?: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

export const PACKAGE_JSON = 'package.json';

/** The parsed package.json at the app root, or undefined when there is none. */
export function readPackageJson(appDir: string): PackageJson | undefined {
  const file = path.join(appDir, PACKAGE_JSON);
  const invalid = (value: string, rule: string, fix: string, details?: string[]) =>
    new UserError({
      id: 'node/package-json/parse',
      title: 'package.json cannot be used',
      seen: { what: PACKAGE_JSON, value, where: file },
      rule,
      fix,
      ...(details ? { details } : {}),
    });
  let text: string;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  if (jsonDepth(text) > MAX_JSON_DEPTH) {
    throw invalid(`${text.slice(0, 60)}…`, `package.json nests at most ${MAX_JSON_DEPTH} levels of arrays and objects.`, 'Flatten the deeply nested value.');
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (e) {
    throw invalid(
      text.length > 60 ? `${text.slice(0, 60)}…` : text,
      'package.json is a JSON object.',
      'Fix the JSON syntax (an editor or `node -e "require(\'./package.json\')"` shows where).',
      [(e as Error).message],
    );
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) {
    throw invalid(
      JSON.stringify(raw).slice(0, 60),
      'package.json is a JSON object.',
      'Make the file one JSON object: { "name": …, "scripts": { "start": … } }.',
    );
  }
  const pkg = raw as Record<string, unknown>;
  const mustBe = (field: string, ok: boolean, shape: string) => {
    if (ok) return;
    const value = `${field}: ${JSON.stringify(pkg[field] ?? null)}`.slice(0, 120);
    throw invalid(value, `"${field}" in package.json is ${shape}.`, `Correct "${field}" or remove it.`);
  };
  const isStringMap = (v: unknown) =>
    v === undefined || (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string'));
  mustBe('main', pkg.main === undefined || typeof pkg.main === 'string', 'a string (the file to run)');
  mustBe('scripts', isStringMap(pkg.scripts), 'an object of strings (script name → command)');
  mustBe('engines', pkg.engines === undefined || (typeof pkg.engines === 'object' && pkg.engines !== null && !Array.isArray(pkg.engines)), 'an object');
  const engines = pkg.engines as Record<string, unknown> | undefined;
  if (engines?.node !== undefined && typeof engines.node !== 'string') {
    throw invalid(
      `engines.node: ${JSON.stringify(engines.node)}`,
      '"engines.node" is a semver range string such as ">=20" or "22.x".',
      'Write engines.node as a string.',
    );
  }
  mustBe('packageManager', pkg.packageManager === undefined || typeof pkg.packageManager === 'string', 'a string such as "pnpm@10.12.1"');
  mustBe('dependencies', isStringMap(pkg.dependencies), 'an object of strings (package → version)');
  mustBe('devDependencies', isStringMap(pkg.devDependencies), 'an object of strings (package → version)');
  return pkg;
}

export type StartMethod =
  | { kind: 'run-command'; command: string }
  | { kind: 'start-script'; command: string }
  | { kind: 'procfile'; command: string; procfile: Procfile }
  | { kind: 'main'; file: string };

/** Where the start command came from, as the log names it. */
export const START_SOURCE: Record<StartMethod['kind'], string> = {
  'run-command': 'CC_RUN_COMMAND',
  'start-script': 'scripts.start',
  procfile: "the Procfile's web",
  main: 'main',
};

/**
 * Contract: CC_RUN_COMMAND takes priority over all other start methods, then scripts.start; then,
 * as on Heroku, the Procfile's `web` (procfile.ts, read only when it decides); then main.
 */
export function startMethod(pkg: PackageJson, env: Record<string, string | undefined>, appDir?: string): StartMethod | undefined {
  const run = value(env, 'CC_RUN_COMMAND');
  if (run) return { kind: 'run-command', command: run };
  const start = pkg.scripts?.start?.trim();
  if (start) return { kind: 'start-script', command: start };
  const procfile = appDir === undefined ? undefined : readProcfile(appDir);
  const web = procfile?.processes.get('web');
  if (procfile && web) return { kind: 'procfile', command: web, procfile };
  const main = pkg.main?.trim();
  if (main) return { kind: 'main', file: main };
  return undefined;
}

export const NOTHING_TO_START_FIX =
  'Add "scripts": { "start": "node server.js" } or "main": "server.js" to package.json, a Procfile with a web: line, or set CC_RUN_COMMAND.';

/** The files a Node.js app without package.json starts from (Heroku's Node.js buildpack detects these). */
export const BARE_ENTRY_FILES = ['server.js', 'index.js'] as const;

/**
 * A Node.js app with no package.json: a server.js or index.js at the root, and
 * nothing another runtime serves (an index.html, index.htm or index.php at the root, or CC_WEBROOT
 * or CC_BUILD_COMMAND set). The contract requires package.json: detect takes such an app so that its
 * build says which one to add, instead of no runtime taking it.
 */
export function bareEntryFile(appDir: string, env: Record<string, string | undefined>): string | undefined {
  if (fs.existsSync(path.join(appDir, PACKAGE_JSON))) return undefined;
  if (isSet(env, 'CC_WEBROOT') || isSet(env, 'CC_BUILD_COMMAND')) return undefined;
  const served = [...new Set([...INDEX_FILES.static, ...INDEX_FILES.phpserver])];
  if (findIndex(appDir, served)) return undefined;
  return findIndex(appDir, BARE_ENTRY_FILES);
}

/** node/package-json/missing: the package.json to add, when the app starts from a bare server.js or index.js. */
export function missingPackageJson(appDir: string, entry: string | undefined): UserError {
  return new UserError({
    id: 'node/package-json/missing',
    title: 'No package.json',
    seen: { what: 'package.json', value: entry ? `missing; ${entry} is at the root` : 'missing', where: appDir },
    rule: 'A node application has a package.json at its root, with scripts.start or main (contract, node variables and rule 1).',
    fix: entry
      ? `Add this package.json at the root (two lines), commit it and deploy again:\n{ "name": "app", "private": true,\n  "scripts": { "start": "node ${entry}" } }`
      : 'Add a package.json.',
  });
}
