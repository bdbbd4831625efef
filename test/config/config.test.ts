/**
 * lib/config: one reader for every variable (whitespace-only is unset; an invalid value is the
 * variable's own user error, the secret's value never shown), the ports read through it, and the
 * README's variable tables kept equal to the declarations.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { isSet, raw, read, readAppPath, readFamily } from '../../lib/config/read.ts';
import { BEGIN, END, renderVariableTables } from './variable-tables.ts';
import { VARIABLES } from '../../lib/config/variables.ts';
import { renderUserError, type UserError } from '../../lib/errors.ts';
import { appListenPort, publicPort } from '../../lib/launch/ports.ts';
import { activeMiddlewares, cacheVcl } from '../../lib/launch/request-flow/activation.ts';
import { healthCheckPaths } from '../../lib/platform/health.ts';
import { ROOT, tmpDir } from '../helpers/rbp.ts';

function userError(f: () => unknown): UserError {
  try {
    f();
  } catch (e) {
    return e as UserError;
  }
  throw new Error('expected a user error');
}

describe('the reader', () => {
  it('trims once; empty or whitespace-only is unset', () => {
    expect(raw({ A: '  x ' }, 'A')).toBe('x');
    expect(raw({ A: '   ' }, 'A')).toBeUndefined();
    expect(isSet({ A: '\t' }, 'A')).toBe(false);
  });

  it('gives the value with its source: the environment, else the declared default', () => {
    expect(read({ CC_STATIC_PORT: ' 8081 ' }, 'CC_STATIC_PORT')).toEqual({ value: 8081, source: 'env' });
    expect(read({}, 'CC_STATIC_PORT')).toEqual({ value: 8080, source: 'default' });
    expect(read({ CC_HUGO_VERSION: ' ' }, 'CC_HUGO_VERSION')).toEqual({ value: '0.149', source: 'default' });
    expect(read({}, 'CC_RUN_COMMAND')).toBeUndefined();
    expect(read({ CC_OVERRIDE_BUILDCACHE: 'a: b :' }, 'CC_OVERRIDE_BUILDCACHE')?.value).toEqual(['a', 'b']);
  });

  it.each([
    ['CC_STATIC_PORT', 'abc'],
    ['CC_PHPSERVER_PORT', '70000'],
    ['RBP_PUBLIC_PORT', '80.5'],
    ['CC_NODE_VERSION', 'lts'],
    ['CC_NODE_BUILD_TOOL', 'maven'],
    ['CC_PHP_VERSION', '8.3'],
    ['RBP_REQUIRE_CHECKSUMS', 'maybe'],
    ['RBP_NOW', 'tomorrow'],
    ['RBP_STOP_TIMEOUT', '-1'],
  ])("%s=%j is the variable's own user error, with the value, the rule and the fix", (name, value) => {
    const e = userError(() => read({ [name]: value }, name));
    expect(e.id).toBe(`config/${name}/invalid`);
    const text = renderUserError(e.data);
    expect(text).toContain(`Seen: ${name}: ${JSON.stringify(value)}`);
    expect(text).toMatch(/Rule: .+\(contract|Rule: .+\(rbp/);
    expect(text).toContain('Fix:');
  });

  it("never shows a secret's value", () => {
    // No secret has a shape today; the renderer's rule is still checked on a declared secret.
    const s = VARIABLES.filter((v) => v.kind.type === 'secret').map((v) => v.name);
    expect(s.sort()).toEqual(['ACCESSPROXY_CHALLENGE_SECRET', 'CC_NPM_BASIC_AUTH', 'CC_REDIRECTOR_PROJECT_KEY', 'KV_TOKEN', 'NPM_TOKEN']);
  });

  it('a family is declared once for all its members, read in the order of its varying part', () => {
    expect(read({ RBP_TOOL_CADDY: ' /opt/caddy ' }, 'RBP_TOOL_CADDY')).toEqual({ value: '/opt/caddy', source: 'env' });
    expect(() => read({}, 'RBP_TOOLX')).toThrow(/not declared/);
    const env = { CC_HEALTH_CHECK_PATH_10: '/ten', CC_HEALTH_CHECK_PATH_2: 'two', CC_HEALTH_CHECK_PATH_1: ' ', CC_HEALTH_CHECK_PATH_X: '/x' };
    expect(readFamily(env, 'CC_HEALTH_CHECK_PATH_<n>')).toEqual([
      { name: 'CC_HEALTH_CHECK_PATH_2', value: '/two' },
      { name: 'CC_HEALTH_CHECK_PATH_10', value: '/ten' },
    ]);
  });

  it('a URL path gets its leading / and is percent-encoded, as the health check has always taken it', () => {
    expect(read({ CC_HEALTH_CHECK_PATH: 'health' }, 'CC_HEALTH_CHECK_PATH')?.value).toBe('/health');
    expect(read({ CC_HEALTH_CHECK_PATH: '/a b/é' }, 'CC_HEALTH_CHECK_PATH')?.value).toBe('/a%20b/%C3%A9');
    expect(healthCheckPaths({ CC_HEALTH_CHECK_PATH: ' ', CC_HEALTH_CHECK_PATH_0: '/ok' })).toEqual(['/ok']);
    expect(healthCheckPaths({})).toEqual(['/']);
  });

  it('a bool is 1/true/yes or 0/false/no, any case; a path may start with ~/', () => {
    expect(read({ RBP_REQUIRE_CHECKSUMS: 'YES' }, 'RBP_REQUIRE_CHECKSUMS')?.value).toBe(true);
    expect(read({}, 'RBP_REQUIRE_CHECKSUMS')).toEqual({ value: false, source: 'default' });
    expect(read({ RBP_TOOLS_CACHE: '~/tools' }, 'RBP_TOOLS_CACHE')?.value).toBe(path.join(os.homedir(), 'tools'));
  });

  it('every variable is declared once', () => {
    const names = VARIABLES.map((v) => v.name);
    expect(new Set(names).size).toBe(names.length);
  });
});

describe('ports read through the reader', () => {
  it('an invalid runtime port variable stops the launch with its error instead of becoming 8080', () => {
    expect(userError(() => appListenPort({ CC_STATIC_PORT: 'eighty' }, 'CC_STATIC_PORT')).id).toBe('config/CC_STATIC_PORT/invalid');
    expect(userError(() => appListenPort({ CC_PHPSERVER_PORT: '0' }, 'CC_PHPSERVER_PORT')).id).toBe('config/CC_PHPSERVER_PORT/invalid');
    expect(userError(() => publicPort({ RBP_PUBLIC_PORT: 'x' })).id).toBe('config/RBP_PUBLIC_PORT/invalid');
  });

  it('a valid one is used; unset, the public port', () => {
    expect(appListenPort({ CC_STATIC_PORT: '8181' }, 'CC_STATIC_PORT')).toBe(8181);
    expect(appListenPort({ RBP_PUBLIC_PORT: '8282' }, 'CC_STATIC_PORT')).toBe(8282);
    expect(appListenPort({}, 'CC_PHPSERVER_PORT')).toBe(8080);
  });
});

describe('request-flow activation', () => {
  it('a whitespace-only secret activates nothing (it is unset, as everywhere)', () => {
    const app = tmpDir('rbp-config-app-');
    expect([...activeMiddlewares({ CC_REDIRECTOR_PROJECT_KEY: ' ', ACCESSPROXY_CHALLENGE_SECRET: '\t' }, app)]).toEqual([]);
    expect([...activeMiddlewares({ CC_REDIRECTOR_PROJECT_KEY: 'k' }, app)]).toEqual(['redirector']);
  });

  it('CC_CACHE_FILE is read trimmed', () => {
    const app = tmpDir('rbp-config-app-');
    expect(cacheVcl({ CC_CACHE_FILE: ' my.vcl ' }, app)).toMatchObject({ path: path.join(app, 'my.vcl'), shown: 'my.vcl' });
    expect(cacheVcl({ CC_CACHE_FILE: '  ' }, app)).toBeUndefined();
  });
});

describe('paths inside the app: one resolver, one error id per variable', () => {
  it('follows symlinks, and names the path by where it leads', () => {
    const app = tmpDir('rbp-config-app-');
    fs.mkdirSync(path.join(app, 'dist'));
    fs.symlinkSync(path.join(app, 'dist'), path.join(app, 'public'));
    expect(readAppPath({ CC_WEBROOT: '/public/' }, 'CC_WEBROOT', app)).toMatchObject({
      rel: 'public',
      real: 'dist',
      value: '/public/',
      source: 'env',
      type: 'dir',
    });
    expect(readAppPath({}, 'CC_WEBROOT', app)).toMatchObject({ real: '', source: 'default' });
    expect(readAppPath({}, 'CC_CACHE_FILE', app)).toBeUndefined();
  });

  it("a path that leads outside is the variable's own error, whatever the way out", () => {
    const app = tmpDir('rbp-config-app-');
    fs.symlinkSync(os.tmpdir(), path.join(app, 'out'));
    for (const v of ['../x', '/../../etc', 'out']) {
      const e = userError(() => readAppPath({ CC_STATIC_CADDYFILE: v }, 'CC_STATIC_CADDYFILE', app));
      expect(e.id).toBe('config/CC_STATIC_CADDYFILE/invalid');
      expect(e.data.title).toBe('CC_STATIC_CADDYFILE points outside the application');
    }
    expect(userError(() => readAppPath({ CC_CACHE_FILE: 'missing.vcl' }, 'CC_CACHE_FILE', app, { kind: 'file', mustExist: true })).id).toBe(
      'config/CC_CACHE_FILE/invalid',
    );
  });
});

describe('README', () => {
  it('its variable tables are the declarations, rendered', () => {
    const file = path.join(ROOT, 'README.md');
    const text = fs.readFileSync(file, 'utf8');
    const begin = text.indexOf(BEGIN);
    const end = text.indexOf(END);
    expect(begin, `README.md has no ${BEGIN} marker`).toBeGreaterThan(-1);
    const want = `${BEGIN}\n${renderVariableTables()}\n${END}`;
    const have = text.slice(begin, end + END.length);
    if (have !== want && process.env.RBP_UPDATE_DOCS === '1') fs.writeFileSync(file, text.slice(0, begin) + want + text.slice(end + END.length));
    else expect(have).toBe(want);
  });
});
