/** composer.json and composer.lock at the project root: read, with one clear error when malformed. */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { jsonDepth, MAX_JSON_DEPTH } from '../../../lib/json-depth.ts';
import { UserError } from '../../../lib/errors.ts';

type Requirements = Record<string, string>;

export interface ComposerJson {
  require?: Requirements;
  'require-dev'?: Requirements;
  [key: string]: unknown;
}

export interface LockedPackage {
  name: string;
  require?: Requirements;
}

export interface ComposerLock {
  packages?: LockedPackage[];
  'packages-dev'?: LockedPackage[];
  platform?: Requirements | [];
  'platform-dev'?: Requirements | [];
}

export interface ComposerProject {
  json: ComposerJson;
  lock: ComposerLock | undefined;
  /** sha256 of composer.lock, else of composer.json: what the vendor/ cache is keyed on. */
  inputs: { file: 'composer.lock' | 'composer.json'; sha256: string };
}

function parseObject(file: string, name: string, fix: string): Record<string, unknown> {
  const text = fs.readFileSync(file, 'utf8');
  const error = (title: string, more: { value?: string; details?: string[] }) =>
    new UserError({
      id: `phpserver/${name.replace('.', '-')}/parse`,
      title,
      seen: { what: name, value: more.value, where: file },
      rule: `${name} is a JSON object`,
      fix,
      details: more.details,
    });
  let value: unknown;
  try {
    if (jsonDepth(text) > MAX_JSON_DEPTH) throw new Error(`${name} nests more than ${MAX_JSON_DEPTH} levels of arrays and objects`);
    value = JSON.parse(text);
  } catch (e) {
    throw error(`${name} is not valid JSON`, { details: [(e as Error).message] });
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) throw error(`${name} is not a JSON object`, { value: text.trim().slice(0, 60) });
  return value as Record<string, unknown>;
}

function checkRequirements(v: unknown, field: string, file: string): void {
  if (v === undefined) return;
  if (!v || typeof v !== 'object' || Array.isArray(v) || Object.values(v).some((c) => typeof c !== 'string')) {
    throw new UserError({
      id: 'phpserver/composer-json/parse',
      title: `composer.json "${field}" is not an object of package constraints`,
      seen: { what: `composer.json "${field}"`, value: JSON.stringify(v).slice(0, 80), where: file },
      rule: `"${field}" maps package names to version constraints, e.g. {"ext-intl": "*"}`,
      fix: `correct "${field}" in composer.json (composer validate shows the problems)`,
    });
  }
}

/** The project's Composer files, or undefined when there is no composer.json. */
export function readComposerProject(appDir: string): ComposerProject | undefined {
  const jsonFile = path.join(appDir, 'composer.json');
  if (!fs.existsSync(jsonFile)) return undefined;
  const json = parseObject(jsonFile, 'composer.json', 'correct composer.json (composer validate shows the problem), or remove it') as ComposerJson;
  checkRequirements(json.require, 'require', jsonFile);
  checkRequirements(json['require-dev'], 'require-dev', jsonFile);
  const lockFile = path.join(appDir, 'composer.lock');
  const lock = fs.existsSync(lockFile)
    ? (parseObject(lockFile, 'composer.lock', 'regenerate it with composer update --lock, or delete it') as ComposerLock)
    : undefined;
  const keyFile = lock ? lockFile : jsonFile;
  return {
    json,
    lock,
    inputs: { file: lock ? 'composer.lock' : 'composer.json', sha256: crypto.createHash('sha256').update(fs.readFileSync(keyFile)).digest('hex') },
  };
}
