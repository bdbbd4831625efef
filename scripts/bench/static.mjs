// Static runtime benchmarks: served throughput of a site launched by `rbp run` vs. the same server
// started by hand with the same command line (the launch entrypoint only supervises: it must not sit
// in the request path), and the time from `rbp run` to the first 200. The site is
// fixtures/static-caddy-forced served by caddy file-server (RBP_TOOL_CADDY, else caddy on PATH):
// Static Web Server cannot be installed on the machine these numbers come from.
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort, load, stop, untilOk } from '../bench-lib.mjs';

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
  const startups = [];
  let launched;
  for (let i = 0; i < 5; i++) {
    const port = await freePort();
    const t0 = performance.now();
    const child = spawn('node', [rbp, 'run', out, '--port', String(port), '--env', 'CC_STATIC_SERVER=caddy'], { env, stdio: 'ignore' });
    startups.push(await untilOk(port, t0));
    if (i < 4) await stop(child);
    else launched = { child, port };
  }
  startups.sort((a, b) => a - b);
  results['launch to first 200, median (ms)'] = startups[2];

  // The same server by hand, with the command line the launch plan shows.
  const handPort = await freePort();
  const plan = JSON.parse(execFileSync('node', [rbp, 'run', out, '--dry-run', '--port', String(handPort), '--env', 'CC_STATIC_SERVER=caddy'], { env }).toString()).launch;
  const argv = plan.argv;
  const t0 = performance.now();
  const byHand = spawn(argv[0], argv.slice(1), { cwd: plan.cwd, stdio: 'ignore', env: { ...process.env, HOME: tmp } });
  results['caddy by hand to first 200 (ms)'] = await untilOk(handPort, t0);

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
