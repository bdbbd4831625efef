/**
 * Helpers for the lifecycle conformance tests: apps whose `.bp/<name>/<phase>` scripts say what the
 * scripted fixture buildpacks (fixtures/buildpacks/a..d) do, and a hash of a directory tree.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { FIXTURES, tmpDir } from '../helpers/rbp.ts';

export const BUILDPACKS = path.join(FIXTURES, 'buildpacks');

/** The directory of a fixture buildpack: `a`, `b`, `c`, `d` (scripted) or `node-server`. */
export function bp(name: string): string {
  return path.join(BUILDPACKS, name);
}

/**
 * A copy of scripted buildpack `name` (beside its own copy of scripted.sh) whose buildpack.toml is
 * `edit(original)`: for variants such as clear-env or other [[targets]].
 */
export function editedBuildpack(name: string, edit: (toml: string) => string): string {
  const root = tmpDir('rbp-bp-');
  fs.copyFileSync(path.join(BUILDPACKS, 'scripted.sh'), path.join(root, 'scripted.sh'));
  fs.cpSync(bp(name), path.join(root, name), { recursive: true });
  const file = path.join(root, name, 'buildpack.toml');
  fs.writeFileSync(file, edit(fs.readFileSync(file, 'utf8')));
  return path.join(root, name);
}

/** `--buildpack DIR` for each name, in order. */
export function bpArgs(...names: string[]): string[] {
  return names.flatMap((n) => ['--buildpack', bp(n)]);
}

/**
 * An app in a fresh temporary directory. `scripts` maps `a/detect`, `b/build`... to the sh script
 * that buildpack runs in that phase; `files` are other files of the app.
 */
export function scriptedApp(scripts: Record<string, string>, files: Record<string, string> = {}): string {
  const app = path.join(tmpDir('rbp-lc-'), 'app');
  fs.mkdirSync(app, { recursive: true });
  writeScripts(app, scripts);
  for (const [f, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(app, f)), { recursive: true });
    fs.writeFileSync(path.join(app, f), text);
  }
  return app;
}

/** Replaces (or adds) phase scripts of an existing app, e.g. before a second build. */
export function writeScripts(app: string, scripts: Record<string, string>): void {
  for (const [key, text] of Object.entries(scripts)) {
    const f = path.join(app, '.bp', key);
    fs.mkdirSync(path.dirname(f), { recursive: true });
    fs.writeFileSync(f, `set -e\n${text}\n`);
  }
}

/** A detect script that passes with this build plan (TOML). */
export function passWith(planToml = ''): string {
  return `cat > "$CNB_BUILD_PLAN_PATH" <<'TOML'\n${planToml}\nTOML\nexit 0`;
}

/** A build script line writing launch.toml. */
export function launchToml(toml: string): string {
  return `cat > "$CNB_LAYERS_DIR/launch.toml" <<'TOML'\n${toml}\nTOML`;
}

/** sha256 over every path, type, mode, link target and file content under `dir`. */
export function treeHash(dir: string): string {
  const h = crypto.createHash('sha256');
  const walk = (d: string) => {
    for (const name of fs.readdirSync(d).sort()) {
      const p = path.join(d, name);
      const st = fs.lstatSync(p);
      h.update(`${path.relative(dir, p)}\0${st.mode}\0`);
      if (st.isSymbolicLink()) h.update(fs.readlinkSync(p));
      else if (st.isDirectory()) walk(p);
      else h.update(fs.readFileSync(p));
      h.update('\0');
    }
  };
  walk(dir);
  return h.digest('hex');
}

/** Every file under `dir` (relative paths), for "never written into OUT" checks. */
export function allFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of fs.readdirSync(d, { withFileTypes: true })) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else out.push(p);
    }
  };
  walk(dir);
  return out;
}
