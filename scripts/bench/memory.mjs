// Memory beside the app: what rbp and the launch keep resident while an app runs. Each case starts
// the app through the package's bin (dist/rbp), waits for its first 200, lets it settle, then sums
// the resident memory (VmRSS, and PSS) of every process of ours in the tree under the command's pid
// (rbp's Node.js, its sh wrapper, the launch's sh and its sleep, the planner); the app's own and a
// middleware's are shown apart.
// Goals: nothing of ours resident beside an app without middleware (rbp run, no restart policy), for
// the static (caddy) and the node cases; ≤ 8 MiB of ours with one middleware (the launch's sh).
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, root, untilOk } from '../bench-lib.mjs';

const rbpBin = path.join(root, 'dist', 'rbp');
const rbpJs = path.join(root, 'dist', 'rbp.js');
const GOAL_WITH = 8;

function readProc(pid, file) {
  try {
    return fs.readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return '';
  }
}

/** Every process below `pid` (and itself), from /proc's parent links. */
function processTree(pid) {
  const links = fs
    .readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .map((e) => [Number(e), parentOf(e)]);
  const below = (p) => [p, ...links.filter(([, parent]) => parent === p).flatMap(([child]) => below(child))];
  return below(pid);
}

function parentOf(pid) {
  const stat = readProc(pid, 'stat');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
}

const kib = (text, field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? 0);

/** One process: what it runs, whose it is, its RSS and PSS in MiB. */
export function describe(pid) {
  const cmdline = readProc(pid, 'cmdline').split('\0').slice(0, -1);
  const text = cmdline.join(' ').replace(/\s+/g, ' ');
  const ofLaunch = (p) => readProc(p, 'cmdline').split('\0').some((w) => w.endsWith('/launcher/bin/rbp-launch'));
  let owner = 'app';
  if (text.includes(rbpJs)) owner = 'rbp (Node.js)';
  else if (text.includes(rbpBin)) owner = 'rbp (sh wrapper)';
  else if (ofLaunch(pid)) owner = 'launch (sh)';
  else if (text.includes('/launcher/plan.cjs')) owner = 'planner (Node.js)';
  // The launch's own pause between two looks at what it supervises (lib/launch/sh/supervise.sh rbp_tick).
  else if (cmdline[0] === 'sleep' && ofLaunch(parentOf(pid))) owner = 'launch (sleep)';
  else if (text.includes('middleware.mjs')) owner = 'middleware';
  return {
    pid,
    owner,
    ours: !['app', 'middleware'].includes(owner),
    what: text.length > 90 ? `${text.slice(0, 87)}...` : text,
    rssMiB: kib(readProc(pid, 'status'), 'VmRSS') / 1024,
    pssMiB: kib(readProc(pid, 'smaps_rollup'), 'Pss') / 1024,
  };
}

const sum = (xs, k) => xs.reduce((a, x) => a + x[k], 0);
const r1 = (x) => Math.round(x * 10) / 10;

/** Starts `args` through the bin, measures the tree once the app answers, stops it (SIGTERM) and checks its status. */
async function measure(args, port, env, settleMs = 1000) {
  const child = spawn(rbpBin, args, { stdio: 'ignore', env: { ...process.env, NO_COLOR: '1', ...env } });
  const exited = new Promise((r) => child.once('exit', (code, signal) => r(code ?? signal)));
  try {
    await untilOk(port, performance.now(), 120_000);
    await new Promise((r) => setTimeout(r, settleMs));
    const procs = processTree(child.pid).map(describe);
    const ours = procs.filter((p) => p.ours);
    return {
      oursRss: r1(sum(ours, 'rssMiB')),
      oursPss: r1(sum(ours, 'pssMiB')),
      appRss: r1(sum(procs.filter((p) => p.owner === 'app'), 'rssMiB')),
      middlewareRss: r1(sum(procs.filter((p) => p.owner === 'middleware'), 'rssMiB')),
      tree: procs.map((p) => `${p.owner}: ${p.what} ${r1(p.rssMiB)}`).join('; '),
    };
  } finally {
    child.kill('SIGTERM');
    const status = await exited;
    if (status !== 0) console.error(`bench memory: ${args.join(' ')} ended with ${status} after SIGTERM (expected 0)`);
  }
}

export async function run() {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-bench-memory-'));
  const env = { ...process.env, NO_COLOR: '1' };
  const results = {};
  const show = (name, m) => {
    results[`${name}: ours, RSS (MiB)`] = m.oursRss;
    results[`${name}: ours, PSS (MiB)`] = m.oursPss;
    results[`${name}: the app's RSS (MiB)`] = m.appRss;
    if (m.middlewareRss) results[`${name}: the middleware's RSS (MiB)`] = m.middlewareRss;
    results[`${name}: processes (owner: command RSS MiB)`] = m.tree;
  };
  try {
    // A static site served by caddy.
    const caddy = process.env.RBP_TOOL_CADDY ?? execFileSync('sh', ['-c', 'command -v caddy || true']).toString().trim();
    if (caddy) {
      const out = path.join(work, 'static');
      const cEnv = { RBP_TOOL_CADDY: caddy };
      execFileSync(rbpBin, ['build', path.join(root, 'fixtures', 'static-caddy-forced'), '--type', 'static', '--out', out, '--env', 'CC_STATIC_SERVER=caddy'], {
        env: { ...env, ...cEnv },
        stdio: 'ignore',
      });
      for (const restart of ['no', 'on-failure']) {
        const port = await freePort();
        show(`static (caddy), rbp run --restart ${restart}`, await measure(['run', out, '--port', String(port), '--restart', restart], port, cEnv));
      }
    } else results['static (caddy)'] = 'skipped: no caddy (RBP_TOOL_CADDY or apt-get install caddy)';

    // A node app (node-hello, with fixtures/flow-app's pass-through middleware beside it for the flow case).
    const app = path.join(work, 'node-app');
    fs.cpSync(path.join(root, 'fixtures', 'node-hello'), app, { recursive: true });
    fs.copyFileSync(path.join(root, 'fixtures', 'flow-app', 'middleware.mjs'), path.join(app, 'middleware.mjs'));
    const out = path.join(work, 'node');
    const trust = process.env.NODE_EXTRA_CA_CERTS ? ['--env', `NODE_EXTRA_CA_CERTS=${process.env.NODE_EXTRA_CA_CERTS}`] : [];
    execFileSync(rbpBin, ['build', app, '--type', 'node', '--out', out, ...trust], { env, stdio: 'ignore' });
    for (const restart of ['no', 'on-failure']) {
      const port = await freePort();
      show(`node, no middleware, rbp run --restart ${restart}`, await measure(['run', out, '--port', String(port), '--restart', restart], port, {}));
    }
    {
      const port = await freePort();
      const appPort = await freePort();
      const flow = ['--env', 'CC_REQUEST_FLOW=custom', '--env', 'CC_REQUEST_FLOW_CUSTOM=node middleware.mjs custom @@LISTEN_PORT@@ @@FORWARD_PORT@@'];
      show('node, one middleware (custom), rbp run', await measure(['run', out, '--port', String(port), ...flow], port, { RBP_APP_PORT: String(appPort) }));
    }
    {
      // rbp deploy: the build (warm), the start, the health check, then it stays as the app's supervisor.
      const port = await freePort();
      const dOut = path.join(work, 'deploy');
      show('node, no middleware, rbp deploy', await measure(['deploy', app, '--type', 'node', '--out', dOut, '--port', String(port), ...trust], port, {}, 1500));
    }
    {
      // What a Node.js supervisor would weigh at least: the same Node.js, idle, running nothing of ours.
      const idle = spawn(path.join(out, 'layers', 'rbp_node', 'node', 'bin', 'node'), ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
      await new Promise((r) => setTimeout(r, 1000));
      const d = describe(idle.pid);
      results["for comparison: an idle Node.js, the runtime's own (node -e), RSS / PSS (MiB)"] = `${r1(d.rssMiB)} / ${r1(d.pssMiB)}`;
      idle.kill('SIGTERM');
      await new Promise((r) => idle.once('exit', r));
    }
    const key = (name) => results[`${name}: ours, RSS (MiB)`];
    const without = ['static (caddy), rbp run --restart no', 'node, no middleware, rbp run --restart no'].map(key).filter((x) => x !== undefined);
    results['goal: nothing of ours resident beside an app without middleware (rbp run, --restart no), met'] = without.length > 0 && without.every((x) => x === 0);
    results[`goal: ours ≤ ${GOAL_WITH} MiB with one middleware (rbp run), met`] = key('node, one middleware (custom), rbp run') <= GOAL_WITH;
    return results;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}
