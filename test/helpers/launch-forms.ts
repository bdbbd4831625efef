/**
 * The launch plan of a built fixture, two ways (lib/launch/plan.ts): as `rbp run --dry-run` prints
 * it (the Node.js launcher's account, under `launch`), snapshotted so that a change to a decision
 * shows in review; and as the launch's shell form would run it (RBP_DRY_RUN=shell: the form's own
 * account, from the direct launch script written at build or the form the Node.js launcher renders),
 * which must agree with the first.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'vitest';
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
  supervisor?: 'shell' | 'node';
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
 * version of the Node.js that runs the tests (and rbp), and each version the build resolved from a
 * range (`resolved`: registry-versions.ts), which the registry moves.
 */
export function normalizedPlan(plan: unknown, o: { out: string; port: number; resolved?: Resolved[] }): unknown {
  const tools = Object.entries(process.env)
    .filter(([k, v]) => k.startsWith('RBP_TOOL_') && v && path.isAbsolute(v))
    .sort(([, a], [, b]) => b!.length - a!.length) as [string, string][];
  const text = (s: string): string => {
    let t = s.replaceAll(path.join(o.out, 'workspace'), '<app>').replaceAll(o.out, '<out>');
    for (const [k, v] of tools) t = t.replaceAll(v, `<${k}>`);
    // rbp's own Node.js (the launcher's when the runtime carries none) is the machine's.
    t = t.replaceAll(`Node.js ${process.versions.node} `, "Node.js <rbp's> ");
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

/**
 * The launch process run with RBP_DRY_RUN=shell, in the environment rbp gives it: what its shell form
 * would run. It must be the plan the dry run printed: the same command, folder, variables, port,
 * restart policy, stop timeout, hooks and mode; or, with a request flow, the Node.js launcher's own.
 */
export function expectFormsAgree(dry: DryRun): void {
  const plan = dry.launch;
  if (!plan) return;
  const r = spawnSync(dry.argv[0]!, dry.argv.slice(1), { cwd: dry.cwd, env: { ...dry.env, RBP_DRY_RUN: 'shell' }, encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  const shell = JSON.parse(r.stdout) as Record<string, unknown>;
  if (plan.requestFlow.chain.length || plan.requestFlow.block) {
    // The chain runs in front of the app: only the Node.js launcher supervises it.
    expect(shell.form).toBe('node');
    expect(plan.supervisor).toBe('node');
    return;
  }
  expect(shell.form).toBe('shell');
  expect(shell.argv).toEqual(plan.argv);
  expect(shell.cwd).toBe(fs.realpathSync(plan.cwd));
  // Secrets are shown as *** by the dry run: their values cannot be compared.
  expect(Object.keys(shell.env as object).sort()).toEqual(Object.keys(plan.env).sort());
  for (const [k, v] of Object.entries(plan.env)) if (v !== '***') expect((shell.env as Record<string, string>)[k], k).toBe(v);
  expect(shell.port).toBe(plan.port);
  expect(shell.restart).toEqual(plan.restart);
  expect(shell.stopTimeoutMs).toBe(plan.timeouts.stopMs);
  expect(shell.hooks).toEqual({ prestart: plan.hooks.prestart ?? '', poststart: plan.hooks.poststart ?? '' });
  // A Node.js launcher that cannot hand over (no process.execve) supervises what the form would exec.
  if (plan.supervisor === 'node') return;
  expect(shell.mode).toBe(plan.mode);
  if (plan.mode === 'supervise') expect(shell.modeWhy).toBe(plan.modeWhy);
}
