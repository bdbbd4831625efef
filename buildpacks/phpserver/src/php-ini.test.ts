import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { parse } from 'smol-toml';
import { iniPairs } from './ini-requirements.ts';
import { PRODUCTION_SETTINGS, phpIniExecD, productionIni, writePhpIni } from './php-ini.ts';

const dirs: string[] = [];
function dir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-php-ini-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

/** The php layer written for `app` (in a folder with a space), and what its exec.d program sets, from `start`. */
function written(app: string, start: Record<string, string> = {}) {
  const layer = path.join(dir(), 'my layers', 'php');
  fs.mkdirSync(layer, { recursive: true });
  const appIni = writePhpIni(layer, app);
  fs.mkdirSync(path.join(layer, 'exec.d'));
  const execD = path.join(layer, 'exec.d', 'php-ini');
  fs.writeFileSync(execD, phpIniExecD(), { mode: 0o755 });
  const r = spawnSync(execD, [], { env: { PATH: process.env.PATH, ...start }, stdio: ['ignore', 'ignore', 'inherit', 'pipe'], encoding: 'utf8' });
  expect(r.status).toBe(0);
  return { layer, appIni, env: { ...start, ...(parse(String(r.output[3])) as Record<string, string>) } };
}

describe("PHP's configuration", () => {
  it("the base php.ini holds php.ini-production's changes from PHP's defaults, nothing else", () => {
    expect(iniPairs(productionIni())).toEqual(PRODUCTION_SETTINGS.map(([k, v]) => [k, v.replace(/^"(.*)"$/, '$1')]));
    expect(Object.fromEntries(PRODUCTION_SETTINGS)).toMatchObject({ output_buffering: '4096', display_errors: 'Off', log_errors: 'On' });
  });

  it('without a project php.ini: PHPRC names the base, no scan directory is added', () => {
    const { layer, appIni, env } = written(dir());
    expect(appIni).toBeUndefined();
    expect(fs.readFileSync(path.join(layer, 'etc', 'php.ini'), 'utf8')).toBe(productionIni());
    expect(env).toEqual({ PHPRC: path.join(layer, 'etc') });
  });

  it("with one: it is read last, after the compiled-in scan directory (the leading ':'), from a copy of the project's file", () => {
    const app = dir();
    fs.writeFileSync(path.join(app, 'php.ini'), 'display_errors = On\n');
    fs.writeFileSync(path.join(app, 'config.ini'), 'not = php\n');
    const { layer, appIni, env } = written(app);
    const scan = path.join(layer, 'etc', 'app');
    expect(appIni).toBe(path.join(app, 'php.ini'));
    expect(fs.readdirSync(scan)).toEqual(['php.ini']);
    expect(fs.readFileSync(path.join(scan, 'php.ini'), 'utf8')).toBe('display_errors = On\n');
    expect(env).toEqual({ PHPRC: path.join(layer, 'etc'), PHP_INI_SCAN_DIR: `:${scan}` });
  });

  it("keeps the run environment's own PHPRC, and its scan directories after the project's php.ini", () => {
    const app = dir();
    fs.writeFileSync(path.join(app, 'php.ini'), 'memory_limit = 1G\n');
    const { layer, env } = written(app, { PHPRC: '/etc/mine', PHP_INI_SCAN_DIR: '/etc/mine/conf.d' });
    expect(env).toEqual({ PHPRC: '/etc/mine', PHP_INI_SCAN_DIR: `:${path.join(layer, 'etc', 'app')}:/etc/mine/conf.d` });
  });
});
