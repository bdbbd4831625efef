/**
 * The launch plan of a built fixture (lib/launch/plan.ts) as `rbp run --dry-run` prints it (the
 * planner's account, under `launch`), snapshotted so that a change to a decision shows in review.
 * What the launch's sh does with a plan is tested on real processes (test/launch/).
 */
import path from 'node:path';
import { namingResolved, type Resolved } from './registry-versions.ts';

/** `rbp run --dry-run --json`: the process as rbp starts it, and the launch entrypoint's plan. */
export interface DryRun {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  launch?: LaunchJson;
}

export interface LaunchJson {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  port: number;
  mode: 'exec' | 'supervise';
  modeWhy: string;
  requestFlow: { chain: string[]; block: boolean };
  restart: { policy: string; firstDelayMs: number; maxDelayMs: number; healthyRunMs: number };
  timeouts: { stopMs: number };
  hooks: { prestart?: string; poststart?: string };
  /** The runtime's facts: its server, webroot, versions. */
  server?: unknown;
}

/**
 * The plan with what differs from one machine or run to the next named instead: OUT, the app
 * folder, the port, the operator's tools (RBP_TOOL_*), the folders of the machine's own PATH, the
 * Node.js that runs the tests (and rbp, and so the planner of a build without one), and each version
 * the build resolved from a range (`resolved`: registry-versions.ts), which the registry moves.
 */
export function normalizedPlan(plan: unknown, o: { out: string; port: number; resolved?: Resolved[] }): unknown {
  const tools = Object.entries(process.env)
    .filter(([k, v]) => k.startsWith('RBP_TOOL_') && v && path.isAbsolute(v))
    .sort(([, a], [, b]) => b!.length - a!.length) as [string, string][];
  const text = (s: string): string => {
    let t = s.replaceAll(path.join(o.out, 'workspace'), '<app>').replaceAll(o.out, '<out>');
    for (const [k, v] of tools) t = t.replaceAll(v, `<${k}>`);
    // rbp's own Node.js (the planner's when the runtime carries none) is the machine's.
    t = t.replaceAll(`Node.js ${process.versions.node} `, "Node.js <rbp's> ");
    if (t === process.execPath) t = "<rbp's node>";
    t = namingResolved(t, o.resolved ?? []);
    return t.replace(new RegExp(`\\b${o.port}\\b`, 'g'), '<port>');
  };
  const walk = (v: unknown, key?: string): unknown => {
    if (typeof v === 'string') {
      if (key !== 'PATH') return text(v);
      // The folders the launch put first are the plan's; the rest is the machine's own PATH.
      const dirs = v.split(':');
      const own = dirs.findIndex((d) => !d.startsWith(o.out));
      return [...dirs.slice(0, own < 0 ? dirs.length : own).map(text), ...(own < 0 ? [] : ['<the machine PATH>'])].join(':');
    }
    if (typeof v === 'number') return v === o.port ? '<port>' : v;
    if (Array.isArray(v)) return v.map((x) => walk(x));
    if (v && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x, k)]));
    return v;
  };
  return walk(plan);
}
