/**
 * The one reader of platform variables. Every value is trimmed once here, and a value that is
 * empty or only whitespace counts as unset everywhere (a `CC_REDIRECTOR_PROJECT_KEY=" "` activates
 * nothing). A value that breaks its kind's rule is a user error with one id per variable:
 * `config/<variable>/invalid`; a secret's value is never shown.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { appPathError, resolveAppPath, type AppPath, type AppPathKind } from '../app-path.ts';
import { UserError } from '../errors.ts';
import { describeKind, requestTarget, type Setting, type VariableSpec } from './kinds.ts';
import { VARIABLES } from './variables.ts';

type Env = Record<string, string | undefined>;

/** The value of `name`, trimmed; undefined when unset, empty or whitespace only. */
export function raw(env: Env, name: string): string | undefined {
  const v = env[name]?.trim();
  return v ? v : undefined;
}

/** Whether `name` is set to something other than whitespace. */
export function isSet(env: Env, name: string): boolean {
  return raw(env, name) !== undefined;
}

/** `CC_HEALTH_CHECK_PATH_<n>` → /^CC_HEALTH_CHECK_PATH_(\d+)$/; a plain name matches itself only. */
function familyPattern(template: string): RegExp | undefined {
  const m = /^([A-Z0-9_]+)<(n|NAME)>$/.exec(template);
  if (!m) return undefined;
  return new RegExp(`^${m[1]}(${m[2] === 'n' ? '\\d+' : '[A-Z0-9_]+'})$`);
}

// Made at the first name that is no variable's own: most reads never need them (rbp detect's none).
let families: { spec: VariableSpec; re: RegExp }[] | undefined;
const FAMILIES = () =>
  (families ??= VARIABLES.flatMap((v) => {
    const re = familyPattern(v.name);
    return re ? [{ spec: v, re }] : [];
  }));

/** The declaration of `name`: its own, or its family's (`RBP_TOOL_CADDY` → `RBP_TOOL_<NAME>`). */
export function spec(name: string): VariableSpec {
  const s = VARIABLES.find((v) => v.name === name) ?? FAMILIES().find((f) => f.re.test(name))?.spec;
  if (!s) throw new Error(`lib/config: ${name} is not declared in variables.ts`);
  return s;
}

/** The user error of an invalid value of `name` (declared by `s`): `config/<name>/invalid`. */
export function invalid(s: VariableSpec, value: string, why?: string, name = s.name): UserError {
  const secret = s.kind.type === 'secret';
  return new UserError({
    id: `config/${name}/invalid`,
    title: `Invalid ${name}`,
    seen: { what: name, value: secret ? '(hidden: a secret)' : value, where: WHERE[s.scope] },
    rule: `${name} is ${describeKind(s.kind)}${why ? `: ${why}` : ''} (${s.rule}).`,
    fix:
      s.fix ??
      (s.default !== undefined
        ? `Set ${name} to a valid value, or unset it for the default ${JSON.stringify(s.default)}.`
        : `Set ${name} to a valid value, or unset it.`),
  });
}

/** Where a variable of each scope is set, for the `Seen:` line. */
const WHERE: Record<VariableSpec['scope'], string> = {
  common: 'the application environment',
  node: 'the application environment',
  static: 'the application environment',
  phpserver: 'the application environment',
  operator: 'the operator configuration',
  internal: 'set by rbp',
};

const ON = ['1', 'true', 'yes'];
const OFF = ['0', 'false', 'no'];

/** Parses `text` by the variable's kind; throws the variable's user error when it breaks the rule. */
function parse(s: VariableSpec, text: string, name = s.name): string | number | boolean | string[] {
  return parseKind(s.kind, text, (why) => invalid(s, text, why, name));
}

function parseKind(k: VariableSpec['kind'], text: string, invalid: (why?: string) => UserError): string | number | boolean | string[] {
  switch (k.type) {
    case 'port': {
      const n = Number(text);
      if (!/^\d+$/.test(text) || !Number.isInteger(n) || n < 1 || n > 65535) throw invalid();
      return n;
    }
    case 'enum':
      if (!k.values.includes(text)) throw invalid();
      return text;
    case 'version':
      if (!k.pattern.test(text)) throw invalid();
      return text;
    case 'url-path':
      // As the health check has always taken it: a missing leading / is added, and bytes a request
      // target cannot hold are percent-encoded (`/a b` is checked as `/a%20b`).
      return requestTarget(text.startsWith('/') ? text : `/${text}`);
    case 'seconds': {
      const n = Number(text);
      if (!Number.isFinite(n) || n <= 0) throw invalid();
      return n;
    }
    case 'date':
      if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(Date.parse(text))) throw invalid();
      return text;
    case 'host':
      // The runtime checks the rest (scheme, credentials): see buildpacks/node/src/registry-auth.ts.
      if (/\s/.test(text)) throw invalid();
      return text;
    case 'bool': {
      const v = text.toLowerCase();
      if (ON.includes(v)) return true;
      if (OFF.includes(v)) return false;
      throw invalid();
    }
    case 'bytes': {
      const n = Number(text);
      if (!/^\d+$/.test(text) || !Number.isSafeInteger(n) || n <= 0) throw invalid();
      return n;
    }
    case 'path':
      // `~/` is the home folder, as a shell would expand it.
      return text === '~' || text.startsWith('~/') ? path.join(os.homedir(), text.slice(1)) : text;
    case 'path-list':
    case 'list':
      return text
        .split(k.separator)
        .map((x) => x.trim())
        .filter(Boolean);
    default:
      return text;
  }
}

/**
 * The setting of `name` in `env`: its parsed value and where it came from (the environment, or
 * the declared default); undefined when unset with no default.
 */
export function read<T = string>(env: Env, name: string): Setting<T> | undefined {
  const s = spec(name);
  const text = raw(env, name);
  if (text !== undefined) return { value: parse(s, text, name) as T, source: 'env' };
  if (s.default !== undefined) return { value: parse(s, s.default, name) as T, source: 'default' };
  return undefined;
}

/** The value of `name` parsed by its kind (or its default): for callers that only need the value. */
export function value<T = string>(env: Env, name: string): T | undefined {
  return read<T>(env, name)?.value;
}

/**
 * Every set member of a family (`CC_HEALTH_CHECK_PATH_<n>`), in the order of its varying part
 * (numbers numerically), each with its parsed value.
 */
export function readFamily<T = string>(env: Env, template: string): { name: string; value: T }[] {
  const re = familyPattern(template);
  if (!re || !VARIABLES.some((v) => v.name === template)) throw new Error(`lib/config: ${template} is not a declared family`);
  const s = spec(template);
  return Object.keys(env)
    .map((k) => ({ k, m: re.exec(k) }))
    .filter((x): x is { k: string; m: RegExpExecArray } => x.m !== null && raw(env, x.k) !== undefined)
    .sort((a, b) => (/^\d+$/.test(a.m[1]!) ? Number(a.m[1]) - Number(b.m[1]) : a.m[1]!.localeCompare(b.m[1]!)))
    .map(({ k }) => ({ name: k, value: parse(s, raw(env, k)!, k) as T }));
}

/** A path inside the application named by a variable (kind `app-path`), resolved once. */
export interface AppPathSetting extends AppPath {
  /** The value as set (trimmed), or the default. */
  value: string;
  source: Setting<string>['source'];
  /**
   * Relative to the app root, `/`-separated, '' for the root: where the value leads once symlinks
   * are followed (when it exists), so that what is served or kept is named by its real place.
   */
  real: string;
}

/** What a path must be (`kind`, and whether it must exist), and the fix its error gives. */
type PathOptions = { kind?: AppPathKind; mustExist?: boolean; fix?: string };

/**
 * The one resolver of the `app-path` variables (webroot, Caddyfile, outdir, worker, cache file):
 * read, then resolved in `appDir` through lib/app-path.ts (symlinks followed). A value that leaves
 * the app, or (with `mustExist`) names nothing or the wrong kind of thing, is the variable's own
 * user error, `config/<name>/invalid`. Undefined when unset without a default.
 */
export function readAppPath(env: Env, name: string, appDir: string, o: PathOptions = {}): AppPathSetting | undefined {
  const setting = read(env, name);
  if (!setting) return undefined;
  return resolveSettingPath(appDir, name, setting.value, setting.source, o);
}

/** Resolves one path a variable names (an `app-path` value, or one entry of a `path-list`). */
export function resolveSettingPath(appDir: string, name: string, value: string, source: Setting<string>['source'], o: PathOptions = {}): AppPathSetting {
  const kind = o.kind ?? 'any';
  const r = resolveAppPath(appDir, value, kind, o.mustExist ?? false);
  const s = spec(name);
  if (r.problem) {
    // One id per variable, whatever the problem (the title and rule say which).
    throw appPathError({
      id: 'config',
      fullId: `config/${name}/invalid`,
      what: name,
      value,
      problem: r.problem,
      kind,
      fix: o.fix ?? s.fix ?? `Set ${name} to a path inside the project (relative to its root), for example /public.`,
      where: source === 'default' ? `the default of ${name}` : WHERE[s.scope],
    });
  }
  const found = r.path!;
  const real = found.type ? path.relative(fs.realpathSync.native(appDir), fs.realpathSync.native(found.abs)).split(path.sep).join('/') : found.rel;
  return { ...found, value, source, real };
}
