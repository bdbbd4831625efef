/**
 * The deployment health check (contract: "Deployment health check" and "Errors"): rbp deploy
 * starts a real HTTP server (fixtures/buildpacks/apps/http-server: 200 on / /ok /also-ok, 500 on
 * /broken, 404 elsewhere) through a shell buildpack and checks the configured paths.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { freePort, RBP, rbp, tmpDir } from '../helpers/rbp.ts';
import { bp, BUILDPACKS } from '../lifecycle/helpers.ts';

const APP = path.join(BUILDPACKS, 'apps', 'http-server');
const FOOTER = 'If the deployment fails after this message, please update your configuration and redeploy.';

/** `rbp deploy APP` through the test's node-server buildpack, into a fresh OUT, on `port`. */
function deployArgs(app: string, port: number): string[] {
  return ['deploy', app, '--buildpack', bp('node-server'), '--out', path.join(tmpDir('rbp-health-'), 'out'), '--port', String(port)];
}

async function deploy(env: string[], extra: string[] = ['--check']) {
  const port = await freePort();
  const r = await rbp([...deployArgs(APP, port), ...env.flatMap((e) => ['--env', e]), ...extra]);
  const lines = r.stdout.split('\n');
  // The health check's own lines, in order: from the first response line on.
  const first = lines.findIndex((l) => l.startsWith('Response from GET '));
  return { ...r, check: first === -1 ? [] : lines.slice(first).filter((l) => !l.startsWith('- deployed')) };
}

describe('deployment health check', () => {
  it('passes when every configured path answers 200: one line per path, no summary, exit 0 with --check', async () => {
    const r = await deploy(['CC_HEALTH_CHECK_PATH=/ok', 'CC_HEALTH_CHECK_PATH_0=/also-ok']);
    expect(r.exitCode).toBe(0);
    expect(r.check).toEqual(['Response from GET /ok is 200', 'Response from GET /also-ok is 200']);
    expect(r.stdout).not.toContain('Health check failed:');
  });

  it('checks / when no health-check variable is set', async () => {
    const r = await deploy([]);
    expect(r.exitCode).toBe(0);
    expect(r.check).toEqual(['Response from GET / is 200']);
  });

  it('fails when any path answers something else: every response, then a summary of the failing paths only; exit 3', async () => {
    const r = await deploy([
      'CC_HEALTH_CHECK_PATH=/ok',
      'CC_HEALTH_CHECK_PATH_2=/missing',
      'CC_HEALTH_CHECK_PATH_1=/broken',
      'CC_HEALTH_CHECK_PATH_10=/also-ok',
    ]);
    expect(r.exitCode).toBe(3);
    expect(r.check).toEqual([
      'Response from GET /ok is 200',
      'Response from GET /broken is 500',
      'Response from GET /missing is 404',
      'Response from GET /also-ok is 200',
      'Health check failed:',
      '- GET /broken returned 500.',
      '- GET /missing returned 404.',
      FOOTER,
    ]);
  });

  it('fails without --check too (exit 3) and stops the app', async () => {
    const r = await deploy(['CC_HEALTH_CHECK_PATH=/broken'], []);
    expect(r.exitCode).toBe(3);
    expect(r.check).toEqual(['Response from GET /broken is 500', 'Health check failed:', '- GET /broken returned 500.', FOOTER]);
  });
});

/** An app for the node-server buildpack whose server.js is `code`. */
function appWith(code: string): string {
  const dir = tmpDir('rbp-deploy-app-');
  fs.writeFileSync(path.join(dir, 'package.json'), '{ "private": true }\n');
  fs.writeFileSync(path.join(dir, 'server.js'), code);
  return dir;
}

describe('deploy says why it failed, at once', () => {
  it('-q: a failing health check still prints the summary and the error', async () => {
    const r = await deploy(['CC_HEALTH_CHECK_PATH=/broken'], ['--check', '-q']);
    expect(r.exitCode).toBe(3);
    expect(r.stderr).toContain('- GET /broken returned 500.');
    expect(r.stderr).toContain('(error id: platform/deploy/health-check)');
  });

  it('an app that exits at start fails the deploy as soon as it exits, with its status and its last lines, not after --timeout', async () => {
    const app = appWith("console.log('starting'); console.error('Error: DATABASE_URL is not set'); process.exit(7);\n");
    const port = await freePort();
    const t0 = Date.now();
    const r = await rbp([...deployArgs(app, port), '--check', '--timeout', '60']);
    expect(r.exitCode).toBe(3);
    expect(Date.now() - t0).toBeLessThan(30_000); // the app's exit, not the 60 s timeout
    expect(r.stderr).toContain('! ERROR The application exited (exit status 7) before the deployment was checked');
    expect(r.stderr).toMatch(/its last 2 lines of output:\n! {5}starting\n! {5}Error: DATABASE_URL is not set/);
    expect(r.stderr).toContain('(error id: platform/deploy/crashed)');
  });

  it('--json: the build and the deployment on stdout (the app\'s output on stderr); a failure as {"error": …}', async () => {
    const port = await freePort();
    const ok = await rbp([...deployArgs(APP, port), '--check', '--json', '--env', 'CC_HEALTH_CHECK_PATH=/ok']);
    expect(ok.exitCode, ok.stderr).toBe(0);
    const doc = JSON.parse(ok.stdout);
    expect(doc).toMatchObject({
      exitCode: 0,
      deploy: { deployed: true, url: `http://127.0.0.1:${port}/`, process: 'web', healthCheck: [{ path: '/ok', status: '200' }] },
    });
    expect(doc.layers).toBeInstanceOf(Array);
    const bad = await rbp([...deployArgs(APP, port), '--check', '--json', '--env', 'CC_HEALTH_CHECK_PATH=/broken']);
    expect(bad.exitCode).toBe(3);
    expect(JSON.parse(bad.stdout)).toMatchObject({
      exitCode: 3,
      deploy: { deployed: false },
      error: { id: 'platform/deploy/health-check', message: 'Health check failed', fix: FOOTER },
    });
  });

  it('--check stops the app after the check; one that ignores SIGTERM is killed after the grace period, not waited for forever', async () => {
    const app = appWith(
      "const http = require('node:http');\nprocess.on('SIGTERM', () => console.log('ignoring SIGTERM'));\nhttp.createServer((req, res) => res.end('ok')).listen(Number(process.env.PORT), '0.0.0.0');\n",
    );
    const port = await freePort();
    const r = await execa('node', ['--', RBP, ...deployArgs(app, port), '--check'], {
      reject: false,
      all: true,
      env: { NO_COLOR: '1', RBP_STOP_TIMEOUT: '1' },
      timeout: 90_000,
    });
    expect(r.timedOut, r.all).toBe(false);
    expect(r.exitCode, r.all).toBe(0);
    expect(r.all).toContain('- deployed: ');
    expect(r.all).toContain('ignoring SIGTERM');
    expect(r.all).toMatch(/! rbp: process web still running 6 s after SIGTERM: SIGKILL/);
  });

  it('once deployed, a crash is restarted (--restart on-failure, the default); SIGTERM ends it', async () => {
    const app = appWith(
      // `start` once it listens: the test waits on that line, then asks.
      "const http = require('node:http');\nhttp.createServer((req, res) => { res.end('ok'); if (req.url === '/crash') setTimeout(() => process.exit(1), 10); }).listen(Number(process.env.PORT), '0.0.0.0', () => console.log('start'));\nprocess.on('SIGTERM', () => process.exit(0));\n",
    );
    const port = await freePort();
    const child = execa('node', ['--', RBP, ...deployArgs(app, port), '--env', 'RBP_RESTART_FIRST_DELAY=0.2'], {
      reject: false,
      all: true,
      env: { NO_COLOR: '1', RBP_RESTART_FIRST_DELAY: '0.2' },
    });
    let all = '';
    child.all.on('data', (d: Buffer | string) => (all += d.toString()));
    const until = async (ok: () => boolean) => {
      for (let i = 0; i < 600 && !ok(); i++) await new Promise((r) => setTimeout(r, 100));
      expect(ok(), all).toBe(true);
    };
    await until(() => all.includes('- deployed: '));
    await fetch(`http://127.0.0.1:${port}/crash`).catch(() => undefined);
    await until(() => all.includes('! restarting the app in 200ms (restart 1, --restart on-failure; last exit status 1)'));
    await until(() => all.split('\nstart\n').length >= 3);
    // Its answer, asked until it comes (the line and the listening socket are not one event).
    let body = '';
    for (let i = 0; i < 300 && !body; i++) {
      body = await fetch(`http://127.0.0.1:${port}/`).then(
        (x) => x.text(),
        () => '',
      );
      if (!body) await new Promise((r) => setTimeout(r, 100));
    }
    expect(body, all).toBe('ok');
    child.kill('SIGTERM');
    const r = await child;
    expect(r.exitCode).toBe(0);
  });
});
