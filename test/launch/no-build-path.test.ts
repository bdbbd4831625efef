/**
 * What the launch writes names no folder of the build: the process (`rbp-launch`, found on the
 * launch PATH) and every file of the launcher layer are the same when the same app is built in two
 * folders, and none holds either folder. Real builds of a node app and of a static site (the real
 * Caddy, RBP_TOOL_CADDY); the PHP app's when the real FrankenPHP is given (RBP_TOOL_FRANKENPHP).
 */
import fs from 'node:fs';
import path from 'node:path';
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { copyFixture, envArgs, rbp, tmpDir } from '../helpers/rbp.ts';
import { realTool } from '../helpers/tool-cache.ts';
import { filesOf } from '../helpers/tree.ts';

const caddy = realTool('RBP_TOOL_CADDY', 'no-build-path.test.ts (the static site)');
const frankenphp = realTool('RBP_TOOL_FRANKENPHP', 'no-build-path.test.ts (the PHP app)');

async function twice(fixture: string, type: string, bp: string, env: Record<string, string>, operator: Record<string, string>) {
  const app = copyFixture(fixture);
  return Promise.all(
    ['first', 'second'].map(async (name) => {
      const out = path.join(tmpDir(`rbp-${name}-folder-`), 'out');
      const r = await rbp(['build', app, '--out', out, '--type', type, ...envArgs(env)], { env: operator });
      expect(r.exitCode, r.all).toBe(0);
      const layers = path.join(out, 'layers', bp);
      const launcher = { ...filesOf(path.join(layers, 'launcher'), 'latin1'), 'launcher.toml': fs.readFileSync(path.join(layers, 'launcher.toml'), 'latin1') };
      for (const [f, text] of Object.entries(launcher)) expect(text, f).not.toContain(path.dirname(out));
      const md = parse(fs.readFileSync(path.join(out, 'layers', 'config', 'metadata.toml'), 'utf8')) as { processes: unknown[] };
      return { launcher, processes: md.processes };
    }),
  );
}

describe('the same build in two folders', () => {
  it('a node app: the same launcher layer and process, naming neither folder', async () => {
    const [a, b] = await twice('node-hello', 'node', 'rbp_node', {}, {});
    expect(a!.launcher).toEqual(b!.launcher);
    expect(a!.processes).toEqual(b!.processes);
    expect(a!.processes).toContainEqual(expect.objectContaining({ type: 'web', command: ['rbp-launch'] }));
  }, 300_000);

  it.skipIf(caddy.skip)(
    'a static site: the same launcher layer (its stored plan too) and process, naming neither folder',
    async () => {
      const [a, b] = await twice('launcher-static', 'static', 'rbp_static', { CC_STATIC_SERVER: 'caddy' }, { RBP_TOOL_CADDY: caddy.path() });
      expect(a!.launcher).toEqual(b!.launcher);
      expect(Object.keys(a!.launcher)).toContain('stored-plan.sh');
      expect(a!.processes).toEqual(b!.processes);
    },
    300_000,
  );

  it.skipIf(frankenphp.skip)(
    'a PHP app: the same launcher layer (its stored plan too) and process, naming neither folder',
    async () => {
      const [a, b] = await twice('php-index-php', 'phpserver', 'rbp_phpserver', {}, { RBP_TOOL_FRANKENPHP: frankenphp.path() });
      expect(a!.launcher).toEqual(b!.launcher);
      expect(Object.keys(a!.launcher)).toContain('stored-plan.sh');
      expect(a!.processes).toEqual(b!.processes);
    },
    300_000,
  );
});
