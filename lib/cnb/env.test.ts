import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyEnvDir, applyLayer, applyLayerRoots, LayerEnv, readPlatformEnv, writePlatformEnv, type EnvMap } from './env.ts';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'cnb-env-'));

/** An env dir holding these files (name → raw contents). */
function envDir(files: Record<string, string>): string {
  const dir = tmp();
  for (const [f, v] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), v);
  return dir;
}

function apply(start: EnvMap, files: Record<string, string>): EnvMap {
  const env = { ...start };
  applyEnvDir(env, envDir(files));
  return env;
}

describe('LayerEnv.write', () => {
  it('writes one file per entry, without trailing newline, with a .delim beside appends and prepends', () => {
    const layer = tmp();
    new LayerEnv()
      .override('NODE_ENV', 'production')
      .default('NODE_OPTIONS', '--max-old-space-size=768')
      .prepend('PATH', '/opt/bin', ':')
      .append('JAVA_OPTS', '-Xmx1g', ' ', 'build')
      .override('ONLY_LAUNCH', 'x', 'launch')
      .override('WEB_ONLY', 'w', { process: 'web' })
      .write(layer);
    const read = (f: string) => fs.readFileSync(path.join(layer, f), 'utf8');
    expect(read('env/NODE_ENV.override')).toBe('production');
    expect(read('env/NODE_OPTIONS.default')).toBe('--max-old-space-size=768');
    expect(read('env/PATH.prepend')).toBe('/opt/bin');
    expect(read('env/PATH.delim')).toBe(':');
    expect(read('env.build/JAVA_OPTS.append')).toBe('-Xmx1g');
    expect(read('env.build/JAVA_OPTS.delim')).toBe(' ');
    expect(read('env.launch/ONLY_LAUNCH.override')).toBe('x');
    expect(read('env.launch/web/WEB_ONLY.override')).toBe('w');
    expect(fs.readdirSync(path.join(layer, 'env')).sort()).toEqual(['NODE_ENV.override', 'NODE_OPTIONS.default', 'PATH.delim', 'PATH.prepend']);
  });

  it('replaces the env dirs of a previous write', () => {
    const layer = tmp();
    new LayerEnv().override('OLD', '1').override('OLDL', '1', 'launch').write(layer);
    new LayerEnv().override('NEW', '2').write(layer);
    expect(fs.readdirSync(path.join(layer, 'env'))).toEqual(['NEW.override']);
    expect(fs.existsSync(path.join(layer, 'env.launch'))).toBe(false);
  });

  it.each(['A.B', 'A/B', ''])('rejects the variable name %j', (name) => {
    expect(() => new LayerEnv().override(name, 'x').write(tmp())).toThrow('invalid environment variable name');
  });
});

describe('applying env files (lifecycle semantics)', () => {
  it('no suffix and .override replace the value', () => {
    expect(apply({ A: 'old', B: 'old' }, { A: 'new', 'B.override': 'new' })).toEqual({ A: 'new', B: 'new' });
  });

  it('.default loses to a value already set, wins over unset and over empty', () => {
    expect(apply({ A: 'set', C: '' }, { 'A.default': 'dflt', 'B.default': 'dflt', 'C.default': 'dflt' })).toEqual({ A: 'set', B: 'dflt', C: 'dflt' });
  });

  it('.append and .prepend use NAME.delim from the same dir', () => {
    expect(apply({ A: 'a', P: 'p' }, { 'A.append': 'b', 'A.delim': ':', 'P.prepend': 'q', 'P.delim': ', ' })).toEqual({ A: 'a:b', P: 'q, p' });
  });

  it('the default delimiter is empty: a + b is ab', () => {
    expect(apply({ A: 'a', P: 'p' }, { 'A.append': 'b', 'P.prepend': 'q' })).toEqual({ A: 'ab', P: 'qp' });
  });

  it('inserts no delimiter when the current value is empty or unset', () => {
    expect(apply({ E: '' }, { 'E.append': 'x', 'E.delim': ':', 'U.prepend': 'y', 'U.delim': ':' })).toEqual({ E: 'x', U: 'y' });
  });

  it('ignores a .delim from another dir', () => {
    const env: EnvMap = { A: 'a' };
    applyEnvDir(env, envDir({ 'A.delim': ':' }));
    applyEnvDir(env, envDir({ 'A.append': 'b' }));
    expect(env.A).toBe('ab');
  });

  it('ignores unknown suffixes and directories', () => {
    const dir = envDir({ 'A.bogus': 'x', 'B.append.extra': 'y' });
    fs.mkdirSync(path.join(dir, 'C.override'));
    const env: EnvMap = { A: 'a' };
    applyEnvDir(env, dir);
    expect(env).toEqual({ A: 'a' });
  });

  it('uses contents raw: no trim, no shell expansion', () => {
    expect(apply({}, { A: ' $HOME\n' })).toEqual({ A: ' $HOME\n' });
  });

  it('applies files in byte order: append < default < delim < override < prepend', () => {
    // X: append "1" to "0", default skipped, override "O", then prepend "P" with "|"
    expect(apply({ X: '0' }, { 'X.prepend': 'P', 'X.override': 'O', 'X.delim': '|', 'X.default': 'D', 'X.append': '1' })).toEqual({ X: 'P|O' });
    // Y: unset, append "a" (no delim since empty), default skipped (now set), prepend with |
    expect(apply({}, { 'Y.append': 'a', 'Y.default': 'D', 'Y.delim': '|', 'Y.prepend': 'p' })).toEqual({ Y: 'p|a' });
    // uppercase sorts before lowercase (byte order, not locale)
    expect(apply({}, { 'a.append': 'x', 'B.append': 'y', 'a.delim': '', 'B.delim': '' })).toEqual({ B: 'y', a: 'x' });
  });

  it('an operator dir may give a no-suffix meaning of default', () => {
    const env: EnvMap = { A: 'user' };
    applyEnvDir(env, envDir({ A: 'op', B: 'op' }), 'default');
    expect(env).toEqual({ A: 'user', B: 'op' });
  });

  it('a missing dir changes nothing', () => {
    const env: EnvMap = { A: '1' };
    applyEnvDir(env, path.join(tmp(), 'none'));
    expect(env).toEqual({ A: '1' });
  });
});

describe('layer roots', () => {
  function layerWith(...subdirs: string[]): string {
    const l = tmp();
    for (const s of subdirs) fs.mkdirSync(path.join(l, s));
    return l;
  }

  it('build: bin → PATH, lib → LD_LIBRARY_PATH and LIBRARY_PATH, include → CPATH, pkgconfig → PKG_CONFIG_PATH, prepended with :', () => {
    const l = layerWith('bin', 'lib', 'include', 'pkgconfig');
    const env: EnvMap = { PATH: '/usr/bin', CPATH: '' };
    applyLayerRoots(env, l, 'build');
    expect(env).toEqual({
      PATH: `${l}/bin:/usr/bin`,
      LD_LIBRARY_PATH: `${l}/lib`,
      LIBRARY_PATH: `${l}/lib`,
      CPATH: `${l}/include`,
      PKG_CONFIG_PATH: `${l}/pkgconfig`,
    });
  });

  it('launch: only bin and lib', () => {
    const l = layerWith('bin', 'lib', 'include', 'pkgconfig');
    const env: EnvMap = { PATH: '/usr/bin' };
    applyLayerRoots(env, l, 'launch');
    expect(env).toEqual({ PATH: `${l}/bin:/usr/bin`, LD_LIBRARY_PATH: `${l}/lib` });
  });

  it('only existing subdirectories are added', () => {
    const l = layerWith();
    fs.writeFileSync(path.join(l, 'bin'), 'a file, not a dir');
    const env: EnvMap = { PATH: '/usr/bin' };
    applyLayerRoots(env, l, 'build');
    expect(env).toEqual({ PATH: '/usr/bin' });
  });

  it('applyLayer: roots first, then env/ and env.build/ at build; env/, env.launch/, env.launch/<type>/ at launch', () => {
    const l = layerWith('bin');
    new LayerEnv()
      .prepend('PATH', '/first', ':')
      .override('B', 'build', 'build')
      .override('L', 'launch', 'launch')
      .override('W', 'web', { process: 'web' })
      .write(l);
    const build: EnvMap = { PATH: '/usr/bin' };
    applyLayer(build, l, 'build');
    expect(build).toEqual({ PATH: `/first:${l}/bin:/usr/bin`, B: 'build' });
    const web: EnvMap = { PATH: '/usr/bin' };
    applyLayer(web, l, 'launch', 'web');
    expect(web).toEqual({ PATH: `/first:${l}/bin:/usr/bin`, L: 'launch', W: 'web' });
    const worker: EnvMap = { PATH: '/usr/bin' };
    applyLayer(worker, l, 'launch', 'worker');
    expect(worker).toEqual({ PATH: `/first:${l}/bin:/usr/bin`, L: 'launch' });
  });
});

describe('<platform>/env', () => {
  it('writes one file per variable with raw contents, mode 0600, and reads them back verbatim', () => {
    const p = tmp();
    writePlatformEnv(p, { A: 'x\n', 'B.append': 'y' });
    expect(fs.statSync(path.join(p, 'env', 'A')).mode & 0o777).toBe(0o600);
    expect(readPlatformEnv(p)).toEqual({ A: 'x\n', 'B.append': 'y' });
  });

  it('reads a platform dir without env/ as nothing', () => {
    expect(readPlatformEnv(tmp())).toEqual({});
  });
});
