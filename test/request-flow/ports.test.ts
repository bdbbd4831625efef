import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { appListenPort, publicPort } from '../../lib/launch/ports.ts';
import { isActive } from '../../lib/launch/request-flow/activation.ts';
import { PHPSERVER_PORT_VARIABLE } from '../../buildpacks/phpserver/src/command.ts';
import { STATIC_PORT_VARIABLE } from '../../buildpacks/static/src/server.ts';
import { tmpDir } from '../helpers/rbp.ts';

/** Each runtime's own port variable, as its launch names it; node's app reads PORT. */
const RUNTIME_PORT_VARIABLES: Record<string, string | undefined> = { node: undefined, phpserver: PHPSERVER_PORT_VARIABLE, static: STATIC_PORT_VARIABLE };
const plain = tmpDir('rbp-ports-');
const withVcl = tmpDir('rbp-ports-vcl-');
fs.mkdirSync(path.join(withVcl, '.rbp'));
fs.writeFileSync(path.join(withVcl, '.rbp', 'cache.vcl'), 'vcl 4.1;\n');

describe('ports for each runtime', () => {
  it('public port: 8080, or RBP_PUBLIC_PORT', () => {
    expect(publicPort({})).toBe(8080);
    expect(publicPort({ RBP_PUBLIC_PORT: '18080' })).toBe(18080);
  });
  it.each([
    ['node', {}, 8080],
    ['node', { PORT: '3000' }, 8080],
    ['phpserver', {}, 8080],
    ['phpserver', { CC_PHPSERVER_PORT: '8181' }, 8181],
    ['static', {}, 8080],
    ['static', { CC_STATIC_PORT: '8282' }, 8282],
  ])('%s without middleware, env %j: %i', (runtime, env, port) => {
    expect(isActive(env, plain)).toBe(false);
    expect(appListenPort(env, RUNTIME_PORT_VARIABLES[runtime], plain)).toBe(port);
  });
  it.each(['node', 'phpserver', 'static'])('%s with a middleware: 9000 whatever its port variable says', (runtime) => {
    const own = { CC_PHPSERVER_PORT: '8181', CC_STATIC_PORT: '8282' };
    for (const [env, dir] of [
      [{ ...own, CC_REDIRECTOR_PROJECT_KEY: 'k' }, plain],
      [{ ...own, ACCESSPROXY_CHALLENGE_SECRET: 's' }, plain],
      [own, withVcl],
      [{ ...own, CC_REQUEST_FLOW: 'custom', CC_REQUEST_FLOW_CUSTOM: 'x @@LISTEN_PORT@@ @@FORWARD_PORT@@' }, plain],
      [{ ...own, CC_REQUEST_FLOW: 'block' }, plain],
    ] as const) {
      expect(isActive(env, dir)).toBe(true);
      expect(appListenPort(env, RUNTIME_PORT_VARIABLES[runtime], dir)).toBe(9000);
    }
  });
  it('RBP_APP_PORT moves the app port behind middleware only', () => {
    expect(appListenPort({ RBP_APP_PORT: '19000', CC_REDIRECTOR_PROJECT_KEY: 'k' }, undefined, plain)).toBe(19000);
    expect(appListenPort({ RBP_APP_PORT: '19000' }, undefined, plain)).toBe(8080);
  });
  it('an invalid CC_REQUEST_FLOW does not throw here (the launch reports it)', () => {
    expect(isActive({ CC_REQUEST_FLOW: 'nonsense' }, plain)).toBe(false);
    expect(isActive({ CC_REQUEST_FLOW: 'custom' }, plain)).toBe(false);
  });
});
