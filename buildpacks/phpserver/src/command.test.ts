import { describe, expect, it } from 'vitest';
import { launchContext } from '../../../lib/launch/plan.ts';
import { planPhpServer, type PhpServerDecision } from './command.ts';

const decision: PhpServerDecision = {
  runtime: 'phpserver',
  webroot: 'public',
  server: { id: 'frankenphp', version: '1.9.1', php: '8.4.12', caddy: '2.10.2', path: '/layers/frankenphp/bin/frankenphp', source: 'download' },
};

describe('planPhpServer', () => {
  it('runs php-server on 0.0.0.0:8080 with the webroot', () => {
    const p = planPhpServer(decision, launchContext({}, '/nonexistent-app', 'CC_PHPSERVER_PORT'));
    expect(p.argv).toEqual(['/layers/frankenphp/bin/frankenphp', 'php-server', '--listen', '0.0.0.0:8080', '--root', '/nonexistent-app/public']);
    expect(p.env).toEqual({});
  });
  it('adds --worker in worker mode', () => {
    const p = planPhpServer(
      { ...decision, worker: 'public/worker.php' },
      launchContext({ CC_PHPSERVER_PORT: '8181' }, '/nonexistent-app', 'CC_PHPSERVER_PORT'),
    );
    expect(p.argv).toEqual([
      '/layers/frankenphp/bin/frankenphp',
      'php-server',
      '--listen',
      '0.0.0.0:8181',
      '--root',
      '/nonexistent-app/public',
      '--worker',
      '/nonexistent-app/public/worker.php',
    ]);
    expect(p.env).toEqual({});
  });
  it('listens on 9000 behind request-flow middleware', () => {
    expect(
      planPhpServer(decision, launchContext({ CC_PHPSERVER_PORT: '8181', ACCESSPROXY_CHALLENGE_SECRET: 's' }, '/nonexistent-app', 'CC_PHPSERVER_PORT')).argv,
    ).toContain('0.0.0.0:9000');
  });
  it("uses the operator's server at launch when RBP_TOOL_FRANKENPHP is set", () => {
    expect(planPhpServer(decision, launchContext({ RBP_TOOL_FRANKENPHP: '/opt/frankenphp' }, '/nonexistent-app', 'CC_PHPSERVER_PORT')).argv[0]).toBe(
      '/opt/frankenphp',
    );
  });
  it("lets CC_RUN_COMMAND replace the whole command, exec'd when it is a simple command", () => {
    expect(planPhpServer(decision, launchContext({ CC_RUN_COMMAND: 'frankenphp run --config Caddyfile' }, '/a', 'CC_PHPSERVER_PORT')).argv).toEqual([
      '/bin/sh',
      '-c',
      'exec frankenphp run --config Caddyfile',
    ]);
    expect(planPhpServer(decision, launchContext({ CC_RUN_COMMAND: 'php migrate.php && frankenphp php-server' }, '/a', 'CC_PHPSERVER_PORT')).argv).toEqual([
      '/bin/sh',
      '-c',
      'php migrate.php && frankenphp php-server',
    ]);
  });
});
