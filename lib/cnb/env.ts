/**
 * Environment files (cnb-spec.md §5): writing them for a layer, and applying them the way the
 * reference lifecycle does — files in byte order, name up to the first `.`, contents raw, an empty
 * default delimiter, `.default` only when the current value is empty.
 */
import fs from 'node:fs';
import path from 'node:path';

export type EnvMap = Record<string, string>;
export type EnvAction = 'override' | 'default' | 'append' | 'prepend';

/** Variables the lifecycle joins with `:` when a user or layer root adds to them. */
export const POSIX_PATH_VARS = ['PATH', 'LD_LIBRARY_PATH', 'LIBRARY_PATH', 'CPATH', 'PKG_CONFIG_PATH'] as const;

const ACTIONS = new Set(['override', 'default', 'append', 'prepend', 'delim']);

/** An unset or empty variable takes the value whatever the action; `default` leaves a set one as it is. */
function applyOne(env: EnvMap, name: string, action: EnvAction, value: string, delim: string): void {
  const current = env[name];
  if (action === 'override' || !current) env[name] = value;
  else if (action === 'append') env[name] = `${current}${delim}${value}`;
  else if (action === 'prepend') env[name] = `${value}${delim}${current}`;
}

/**
 * Applies one env directory (`env/`, `env.build/`, `env.launch/`, `env.launch/<type>/`) to `env` in
 * place. `noSuffix` is what a file without suffix means: override for buildpack layers, and for the
 * operator's build-config env (lifecycle env.go `WithOverrides`).
 */
export function applyEnvDir(env: EnvMap, dir: string, noSuffix: EnvAction = 'override'): void {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return;
  }
  names.sort(); // byte order, as Go's ReadDir
  const files = names.filter((n) => fs.statSync(path.join(dir, n)).isFile());
  for (const file of files) {
    const dot = file.indexOf('.');
    const name = dot === -1 ? file : file.slice(0, dot);
    const suffix = dot === -1 ? '' : file.slice(dot + 1);
    if (suffix === 'delim') continue;
    if (suffix !== '' && !ACTIONS.has(suffix)) continue; // unknown suffixes are ignored (lifecycle)
    const action = (suffix === '' ? noSuffix : suffix) as EnvAction;
    const value = fs.readFileSync(path.join(dir, file), 'utf8');
    const delimFile = path.join(dir, `${name}.delim`);
    const delim = files.includes(`${name}.delim`) ? fs.readFileSync(delimFile, 'utf8') : '';
    applyOne(env, name, action, value, delim);
  }
}

/** Prepends `dir` to a `:`-separated variable. */
export function prependPath(env: EnvMap, name: string, dir: string): void {
  env[name] = env[name] ? `${dir}:${env[name]}` : dir;
}

/**
 * Layer roots: `<layer>/bin` → PATH, `<layer>/lib` → LD_LIBRARY_PATH (and LIBRARY_PATH at build),
 * `<layer>/include` → CPATH and `<layer>/pkgconfig` → PKG_CONFIG_PATH at build only.
 */
export function applyLayerRoots(env: EnvMap, layerDir: string, phase: 'build' | 'launch', shownAs = layerDir): void {
  const roots: [string, string[]][] =
    phase === 'build'
      ? [
          ['bin', ['PATH']],
          ['lib', ['LD_LIBRARY_PATH', 'LIBRARY_PATH']],
          ['include', ['CPATH']],
          ['pkgconfig', ['PKG_CONFIG_PATH']],
        ]
      : [
          ['bin', ['PATH']],
          ['lib', ['LD_LIBRARY_PATH']],
        ];
  for (const [sub, vars] of roots) {
    const d = path.join(layerDir, sub);
    if (fs.existsSync(d) && fs.statSync(d).isDirectory()) for (const v of vars) prependPath(env, v, path.join(shownAs, sub));
  }
}

/**
 * Applies one layer: its roots, then its env dirs for the phase (and process type at launch).
 * `shownAs` is the path the processes that get the env see the layer at, when it differs from where
 * it is read (a build's new generation, seen at OUT's path).
 */
export function applyLayer(env: EnvMap, layerDir: string, phase: 'build' | 'launch', processType?: string, shownAs = layerDir): void {
  applyLayerRoots(env, layerDir, phase, shownAs);
  applyLayerEnv(env, layerDir, phase, processType);
}

/**
 * A layer's env dirs: `env/` then `env.build/` at build; `env/`, `env.launch/`, `env.launch/<type>/`
 * at launch. (The launcher applies all roots of a buildpack before any of its env dirs.)
 */
export function applyLayerEnv(env: EnvMap, layerDir: string, phase: 'build' | 'launch', processType?: string): void {
  applyEnvDir(env, path.join(layerDir, 'env'));
  if (phase === 'build') applyEnvDir(env, path.join(layerDir, 'env.build'));
  else {
    applyEnvDir(env, path.join(layerDir, 'env.launch'));
    if (processType) applyEnvDir(env, path.join(layerDir, 'env.launch', processType));
  }
}

export type EnvScope = 'all' | 'build' | 'launch' | { process: string };

interface EnvEntry {
  scope: EnvScope;
  name: string;
  action: EnvAction;
  value: string;
  delim?: string;
}

function scopeDir(scope: EnvScope): string {
  if (scope === 'all') return 'env';
  if (scope === 'build') return 'env.build';
  if (scope === 'launch') return 'env.launch';
  return path.join('env.launch', scope.process);
}

/**
 * What a buildpack declares for a layer's environment. Appends and prepends always carry a
 * delimiter: the lifecycle has no default one (cnb-spec.md mistake 3).
 */
export class LayerEnv {
  readonly entries: EnvEntry[] = [];

  override(name: string, value: string, scope: EnvScope = 'all'): this {
    this.entries.push({ scope, name, action: 'override', value });
    return this;
  }
  default(name: string, value: string, scope: EnvScope = 'all'): this {
    this.entries.push({ scope, name, action: 'default', value });
    return this;
  }
  append(name: string, value: string, delim: string, scope: EnvScope = 'all'): this {
    this.entries.push({ scope, name, action: 'append', value, delim });
    return this;
  }
  prepend(name: string, value: string, delim: string, scope: EnvScope = 'all'): this {
    this.entries.push({ scope, name, action: 'prepend', value, delim });
    return this;
  }

  /** Replaces the layer's env dirs with these entries (written without trailing newline). */
  write(layerDir: string): void {
    for (const d of ['env', 'env.build', 'env.launch']) fs.rmSync(path.join(layerDir, d), { recursive: true, force: true });
    for (const e of this.entries) {
      if (e.name.includes('.') || e.name.includes('/') || e.name === '') throw new Error(`invalid environment variable name ${JSON.stringify(e.name)}`);
      const dir = path.join(layerDir, scopeDir(e.scope));
      fs.mkdirSync(dir, { recursive: true });
      fs.writeFileSync(path.join(dir, `${e.name}.${e.action}`), e.value);
      if (e.delim !== undefined) fs.writeFileSync(path.join(dir, `${e.name}.delim`), e.delim);
    }
  }
}

/** Reads `<platform>/env/`: one file per variable, name verbatim, contents raw (cnb-spec.md §1). */
export function readPlatformEnv(platformDir: string): EnvMap {
  const out: EnvMap = {};
  const dir = path.join(platformDir, 'env');
  let names: string[];
  try {
    names = fs.readdirSync(dir).sort();
  } catch {
    return out;
  }
  for (const n of names) {
    const f = path.join(dir, n);
    if (fs.statSync(f).isFile()) out[n] = fs.readFileSync(f, 'utf8');
  }
  return out;
}

/** Writes `<platform>/env/`: the inverse of readPlatformEnv. */
export function writePlatformEnv(platformDir: string, env: EnvMap): void {
  const dir = path.join(platformDir, 'env');
  fs.mkdirSync(dir, { recursive: true });
  for (const [k, v] of Object.entries(env)) fs.writeFileSync(path.join(dir, k), v, { mode: 0o600 });
}
