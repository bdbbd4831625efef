import { describe, expect, it } from 'vitest';
import { launchContext } from '../../../lib/launch/plan.ts';
import { parseFlags, serverPlan, type StaticDecision } from './server.ts';

const APP = '/srv/app';
const sws: StaticDecision = { runtime: 'static', webroot: 'public', mode: 'static-web-server', bin: '/l/sws/bin/static-web-server' };
const caddyRun: StaticDecision = { runtime: 'static', webroot: '', mode: 'caddy-run', bin: '/l/caddy/bin/caddy', caddyfile: 'conf/Caddyfile' };
const fileServer: StaticDecision = { runtime: 'static', webroot: 'dist', mode: 'caddy-file-server', bin: '/usr/bin/caddy' };

describe('the server command line', () => {
  it('Static Web Server: port 8080 by default, the webroot as root, sws.toml honoured, flags appended', () => {
    expect(serverPlan(sws, launchContext({}, APP, 'CC_STATIC_PORT')).argv).toEqual([
      '/l/sws/bin/static-web-server',
      '--host',
      '0.0.0.0',
      '--port',
      '8080',
      '--root',
      '/srv/app/public',
      '--index-files',
      'index.html,index.htm',
    ]);
    const p = serverPlan(
      { ...sws, swsConfig: 'sws.toml' },
      launchContext({ CC_STATIC_PORT: '8181', CC_STATIC_FLAGS: '--log-level info --page-fallback "./public/index.html"' }, APP, 'CC_STATIC_PORT'),
    );
    expect(p.argv).toEqual([
      '/l/sws/bin/static-web-server',
      '--host',
      '0.0.0.0',
      '--port',
      '8181',
      '--root',
      '/srv/app/public',
      '--index-files',
      'index.html,index.htm',
      '--config-file',
      '/srv/app/sws.toml',
      '--log-level',
      'info',
      '--page-fallback',
      './public/index.html',
    ]);
    expect(p.facts).toMatchObject({ server: 'static-web-server', webroot: '/public' });
  });

  it('listens on 9000 when a request-flow middleware is active, whatever CC_STATIC_PORT says', () => {
    expect(serverPlan(sws, launchContext({ CC_STATIC_PORT: '8181', CC_REDIRECTOR_PROJECT_KEY: 'k' }, APP, 'CC_STATIC_PORT')).argv).toContain('9000');
  });

  it('Caddyfile: caddy run --config <file> --adapter caddyfile, the port as {$PORT}', () => {
    const p = serverPlan(caddyRun, launchContext({ CC_STATIC_PORT: '8282' }, APP, 'CC_STATIC_PORT'));
    expect(p.argv).toEqual(['/l/caddy/bin/caddy', 'run', '--config', '/srv/app/conf/Caddyfile', '--adapter', 'caddyfile']);
    // PORT itself is the launch's to set (lib/launch/plan.ts portEnv), for every runtime.
    expect(p.env).toEqual({});
  });

  it('CC_STATIC_SERVER=caddy: caddy file-server with root and listen address', () => {
    expect(serverPlan(fileServer, launchContext({ CC_STATIC_FLAGS: '--access-log' }, APP, 'CC_STATIC_PORT')).argv).toEqual([
      '/usr/bin/caddy',
      'file-server',
      '--root',
      '/srv/app/dist',
      '--listen',
      ':8080',
      '--access-log',
    ]);
  });

  it('CC_RUN_COMMAND takes priority over every server', () => {
    for (const d of [sws, caddyRun, fileServer]) {
      const p = serverPlan(d, launchContext({ CC_RUN_COMMAND: 'python3 -m http.server $PORT', CC_STATIC_PORT: '8383' }, APP, 'CC_STATIC_PORT'));
      expect(p.argv).toEqual(['/bin/sh', '-c', 'exec python3 -m http.server $PORT']);
    }
  });

  it('CC_STATIC_FLAGS is split like a shell, and shell syntax is refused', () => {
    expect(parseFlags(`--a 'b c' --d=$HOME`)).toEqual(['--a', 'b c', '--d=$HOME']);
    expect(parseFlags('  ')).toEqual([]);
    expect(() => parseFlags('--x | rm -rf /')).toThrow(/CC_STATIC_FLAGS holds shell syntax/);
  });
});
