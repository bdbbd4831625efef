/**
 * The deployment health check (contract: "Deployment health check" and "Errors"): rbp deploy
 * starts a real HTTP server (fixtures/buildpacks/apps/http-server: 200 on / /ok /also-ok, 500 on
 * /broken, 404 elsewhere) through a shell buildpack and checks the configured paths.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { freePort, rbp, tmpDir } from '../helpers/rbp.ts';
import { bp, BUILDPACKS } from '../lifecycle/helpers.ts';

const APP = path.join(BUILDPACKS, 'apps', 'http-server');
const FOOTER = 'If the deployment fails after this message, please update your configuration and redeploy.';

async function deploy(env: string[], extra: string[] = ['--check']) {
  const port = await freePort();
  const r = await rbp(['deploy', APP, '--buildpack', bp('node-server'), '--out', path.join(tmpDir('rbp-health-'), 'out'), '--port', String(port), ...env.flatMap((e) => ['--env', e]), ...extra]);
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
    const r = await deploy(['CC_HEALTH_CHECK_PATH=/ok', 'CC_HEALTH_CHECK_PATH_2=/missing', 'CC_HEALTH_CHECK_PATH_1=/broken', 'CC_HEALTH_CHECK_PATH_10=/also-ok']);
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
