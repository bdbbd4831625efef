// Static runtime benchmarks (launch): the time to the first 200 of a site started three ways, medians
// of 5 each, in one run: by `rbp run`; by the app's launch process alone (rbp-launch, as a platform's
// launcher starts it in an image with no Node.js: the plan stored at build); and by the
// same server started by hand with the same command line. Goal: the launch process within 100 ms of
// the server by hand. Then the throughput served through `rbp run` vs. by hand (nothing may sit in the
// request path). The site is fixtures/static-caddy-forced served by caddy file-server (RBP_TOOL_CADDY,
// else caddy on PATH).
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, load, median, stop, untilOk } from '../bench-lib.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const rbp = path.join(root, 'dist', 'rbp.js');

/** Polls GET / until it answers 200; returns the milliseconds it took. */
export async function run() {
  const caddy = process.env.RBP_TOOL_CADDY ?? execFileSync('sh', ['-c', 'command -v caddy || true']).toString().trim();
  if (!caddy) return { skipped: 'no caddy (RBP_TOOL_CADDY or apt-get install caddy)' };
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-bench-static-'));
  const out = path.join(tmp, 'out');
  const env = { ...process.env, NO_COLOR: '1', RBP_TOOL_CADDY: caddy };
  execFileSync('node', [rbp, 'build', path.join(root, 'fixtures', 'static-caddy-forced'), '--type', 'static', '--out', out, '--env', 'CC_STATIC_SERVER=caddy'], { env, stdio: 'ignore' });

  const results = {};
  /** Median milliseconds to the first 200 of 5 starts of `start(port)`; the last one is left running. */
  async function firstOk(start) {
    const times = [];
    let last;
    for (let i = 0; i < 5; i++) {
      const port = await freePort();
      const t0 = performance.now();
      const child = start(port);
      times.push(await untilOk(port, t0));
      if (i < 4) await stop(child);
      else last = { child, port };
    }
    return { ms: median(times), last };
  }
  const viaRbpRun = await firstOk((port) => spawn('node', [rbp, 'run', out, '--port', String(port), '--env', 'CC_STATIC_SERVER=caddy'], { env, stdio: 'ignore' }));
  const launched = viaRbpRun.last;

  // The launch process alone, with the environment a platform's launcher gives it (no Node.js named).
  const md = JSON.parse(execFileSync('node', [rbp, 'run', out, '--dry-run', '--port', '8080', '--env', 'CC_STATIC_SERVER=caddy'], { env }).toString());
  const { RBP_LAUNCHER_NODE: _node, ...platformEnv } = md.env;
  const launchEnv = (port) => ({ ...platformEnv, PORT: String(port), RBP_PUBLIC_PORT: String(port), CC_STATIC_SERVER: 'caddy' });
  const viaLaunch = await firstOk((port) => spawn(md.argv[0], md.argv.slice(1), { cwd: md.cwd, env: launchEnv(port), stdio: 'ignore' }));
  await stop(viaLaunch.last.child);

  // The same server by hand, with the command line the launch plan shows.
  const plan = md.launch;
  const byHandStart = await firstOk((port) => {
    const argv = plan.argv.map((a) => (a === ':8080' ? `:${port}` : a));
    return spawn(argv[0], argv.slice(1), { cwd: plan.cwd, stdio: 'ignore', env: { ...process.env, HOME: tmp } });
  });
  const byHand = byHandStart.last.child;
  const handPort = byHandStart.last.port;
  results['rbp run to first 200, median (ms)'] = viaRbpRun.ms;
  results['launch process to first 200, median (ms)'] = viaLaunch.ms;
  results['caddy by hand to first 200, median (ms)'] = byHandStart.ms;
  results['launch process - by hand (ms; goal <= 100)'] = viaLaunch.ms - byHandStart.ms;
  results['rbp run - by hand (ms)'] = viaRbpRun.ms - byHandStart.ms;
  results['how the launch process starts caddy'] = plan.modeWhy;

  await load(launched.port, { ms: 500 }); // warm-up
  await load(handPort, { ms: 500 });
  // Alternated, so that neither side gets the machine's quieter moments.
  let viaRbp = 0;
  let direct = 0;
  for (let i = 0; i < 3; i++) {
    viaRbp += (await load(launched.port, { ms: 2000 })).rps / 3;
    direct += (await load(handPort, { ms: 2000 })).rps / 3;
  }
  results['launched: requests/s'] = Math.round(viaRbp);
  results['by hand: requests/s'] = Math.round(direct);
  results['launched / by hand'] = viaRbp / direct;
  await stop(launched.child);
  await stop(byHand);
  fs.rmSync(tmp, { recursive: true, force: true });
  return results;
}
