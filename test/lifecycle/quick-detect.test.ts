/**
 * Our buildpacks' bin/detect answers the cases the app's root files decide alone without Node.js
 * (lib/cnb/sh/bootstrap.sh, from the data of lib/cnb/quick-detect.ts): for every fixture folder, and
 * for apps made to hit each quick answer, bin/detect gives what the full detect (lib/detect.cjs on
 * Node.js) gives: the exit code, what it prints, the plan it writes; and where it answers alone, it
 * starts no Node.js.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { appWith, FIXTURES, ROOT, tmpDir } from '../helpers/rbp.ts';

const RUNTIMES = ['node', 'static', 'phpserver'] as const;

/** One detect of `bp` in `app`, with `vars` as platform env files; `full` runs lib/detect.cjs itself. */
function detect(bp: string, app: string, vars: Record<string, string>, full: boolean, env: NodeJS.ProcessEnv = process.env) {
  const dir = tmpDir('rbp-quick-');
  fs.mkdirSync(path.join(dir, 'platform', 'env'), { recursive: true });
  for (const [k, v] of Object.entries(vars)) fs.writeFileSync(path.join(dir, 'platform', 'env', k), v);
  const plan = path.join(dir, 'plan.toml');
  fs.writeFileSync(plan, '');
  const bpDir = path.join(ROOT, 'dist', 'buildpacks', bp);
  const [file, args] = full ? [process.execPath, [path.join(bpDir, 'lib', 'detect.cjs')]] : [path.join(bpDir, 'bin', 'detect'), []];
  const r = spawnSync(file, args, {
    cwd: app,
    encoding: 'utf8',
    env: { ...env, CNB_BUILDPACK_DIR: bpDir, CNB_PLATFORM_DIR: path.join(dir, 'platform'), CNB_BUILD_PLAN_PATH: plan },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, plan: fs.readFileSync(plan, 'utf8') };
}

/** A PATH with no node on it: a quick answer needs none, and any other fails for want of one. */
function pathWithoutNode(): string {
  const bin = tmpDir('rbp-no-node-');
  for (const tool of ['sh', 'cat', 'dirname', 'pwd']) {
    const found = spawnSync('sh', ['-c', `command -v ${tool}`], { encoding: 'utf8' }).stdout.trim();
    if (found.startsWith('/')) fs.symlinkSync(found, path.join(bin, tool));
  }
  return bin;
}

describe('bin/detect answers alone what the root files decide, as the full detect does', () => {
  const folders = fs.readdirSync(FIXTURES).filter((n) => fs.existsSync(path.join(FIXTURES, n, 'test.json')));

  it.each(RUNTIMES)(
    '%s: every fixture folder',
    (bp) => {
      expect(folders.length).toBeGreaterThan(40);
      for (const name of folders) {
        // node's quick answer holds whatever the variables: one of them set too.
        for (const vars of (bp === 'node' ? [{}, { CC_WEBROOT: '/public' }] : [{}]) as Record<string, string>[]) {
          const app = path.join(FIXTURES, name);
          const quick = detect(bp, app, vars, false);
          const full = detect(bp, app, vars, true);
          expect({ name, vars, ...quick, stderr: quick.stderr.trim() === '' }).toEqual({ name, vars, ...full, stderr: full.stderr.trim() === '' });
        }
      }
    },
    600_000,
  );

  it('the answers it gives alone start no Node.js: an index.php, an index.html, and nothing any buildpack takes', () => {
    const env = { ...process.env, PATH: pathWithoutNode() };
    const php = appWith({ 'index.php': '<?php echo 1;' });
    const site = appWith({ 'index.html': '<p>hi</p>' });
    const empty = appWith({ 'README.md': 'nothing to serve' });
    const cases: [string, string, number, string][] = [
      ['phpserver', php, 0, 'found index.php\n'],
      ['static', site, 0, '/index.html\n'],
      ['node', php, 100, 'rbp/node: no package.json at the application root\n'],
      ['static', php, 100, 'missing: an index.html or index.htm in /'],
      ['phpserver', empty, 100, `neither is in the project root (CC_WEBROOT unset, so the webroot is the project root, ${fs.realpathSync(empty)})\n`],
    ];
    for (const [bp, app, status, said] of cases) {
      const r = detect(bp, app, {}, false, env);
      expect({ bp, status: r.status, stderr: r.stderr }).toEqual({ bp, status, stderr: '' });
      expect(r.stdout).toContain(said);
    }
    // A variable that may change the answer sends it on to Node.js, which this PATH lacks.
    const r = detect('phpserver', php, { CC_WEBROOT: '/' }, false, env);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('bin/detect needs Node.js >= 20');
  });
});
