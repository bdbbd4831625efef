import { describe, expect, it } from 'vitest';
import { launchContext, portEnv, type LaunchContext, type RuntimePlan } from '../../../lib/launch/plan.ts';
import { execCommand } from '../../../lib/launch/exec.ts';
import { nodeOptions, planLaunch, type NodeDecision } from './launch-plan.ts';

const GiB = 1024 ** 3;
const decision: NodeDecision = { runtime: 'node', node: '24.15.0', manager: 'npm 11.12.1', tool: 'npm' };

describe('nodeOptions (contract, node rule 2)', () => {
  it('sets --max-old-space-size to 3/4 of the memory when NODE_OPTIONS is unset', () => {
    expect(nodeOptions(undefined, 2 * GiB)).toBe('--max-old-space-size=1536');
  });
  it('appends it to other flags', () => {
    expect(nodeOptions('--enable-source-maps', GiB)).toBe('--enable-source-maps --max-old-space-size=768');
  });
  it('leaves a NODE_OPTIONS that already holds it alone', () => {
    expect(nodeOptions('--max-old-space-size=100 --trace-warnings', 4 * GiB)).toBe('--max-old-space-size=100 --trace-warnings');
    expect(nodeOptions('--max_old_space_size=100', 4 * GiB)).toBe('--max_old_space_size=100');
  });
  it('changes nothing when the memory is unknown', () => {
    expect(nodeOptions('--x', undefined)).toBe('--x');
    expect(nodeOptions(undefined, undefined)).toBeUndefined();
  });
});

describe('execCommand', () => {
  it('execs a simple command so signals reach the app', () => {
    expect(execCommand('node server.js')).toBe('exec node server.js');
    expect(execCommand('node server.js --port $PORT')).toBe('exec node server.js --port $PORT');
    expect(execCommand('FOO=bar node a.js')).toBe('FOO=bar exec node a.js');
  });
  it('leaves compound commands and an existing exec as they are', () => {
    expect(execCommand('tsc && node dist/a.js')).toBe('tsc && node dist/a.js');
    expect(execCommand('node a.js | tee log')).toBe('node a.js | tee log');
    expect(execCommand('exec node a.js')).toBe('exec node a.js');
  });
});

/** The variables the app gets from the runtime's plan, planned in `ctx`. */
function appEnv(p: (ctx: LaunchContext) => RuntimePlan, ctx: LaunchContext): Record<string, string> {
  return p(ctx).env;
}

describe('planLaunch', () => {
  const base = { decision };
  const at = (env: NodeJS.ProcessEnv) => launchContext(env, '/workspace', undefined);
  it('CC_RUN_COMMAND > scripts.start > main', () => {
    const pkg = { main: 'main.js', scripts: { start: 'node start.js' } };
    expect(planLaunch({ ...base, pkg, ctx: at({ CC_RUN_COMMAND: 'node run.js' }) }).argv).toEqual(['/bin/sh', '-c', 'exec node run.js']);
    expect(planLaunch({ ...base, pkg, ctx: at({}) }).argv).toEqual(['/bin/sh', '-c', 'exec node start.js']);
    expect(planLaunch({ ...base, pkg: { main: 'main.js' }, ctx: at({}) }).argv).toEqual(['node', 'main.js']);
    expect(planLaunch({ ...base, decision: { ...decision, runtime: 'bun' }, pkg: { main: 'main.js' }, ctx: at({}) }).argv).toEqual(['bun', 'main.js']);
  });
  it('with Bun, a start script runs under Bun, which also runs its prestart and poststart', () => {
    const pkg = { scripts: { prestart: 'echo pre', start: 'node a.js', poststart: 'echo post' } };
    const p = planLaunch({ ...base, decision: { ...decision, runtime: 'bun' }, pkg, ctx: at({}) });
    expect(p.argv).toEqual(['bun', '--bun', 'run', 'start']);
    expect(p.hooks).toEqual({});
    expect(p.supervise).toBeUndefined();
  });
  it("NODE_ENV=production, HOST 0.0.0.0, heap from the instance memory; PORT is the launch's (8080, 9000 behind middleware)", () => {
    const ctx = at({ RBP_INSTANCE_MEMORY: String(GiB) });
    const p = (c: LaunchContext) => planLaunch({ ...base, pkg: { main: 'a.js' }, ctx: c });
    expect(appEnv(p, ctx)).toMatchObject({ NODE_ENV: 'production', HOST: '0.0.0.0', NODE_OPTIONS: '--max-old-space-size=768' });
    expect(appEnv(p, at({ HOST: '127.0.0.1', PATH: '/opt/bin' }))).toMatchObject({ HOST: '127.0.0.1', PATH: '/workspace/node_modules/.bin:/opt/bin' });
    expect(appEnv(p, ctx).PORT).toBeUndefined();
    expect(at({}).port).toBe(8080);
    expect(at({ CC_REDIRECTOR_PROJECT_KEY: 'k' }).port).toBe(9000);
    expect(portEnv(9000, undefined, true)).toEqual({ PORT: '9000' });
    expect(portEnv(9000, 'CC_STATIC_PORT', true)).toEqual({ PORT: '9000', CC_STATIC_PORT: '9000' });
    expect(portEnv(8181, 'CC_STATIC_PORT', false)).toEqual({ PORT: '8181' });
  });
  it('runs prestart and poststart around scripts.start only', () => {
    const pkg = { scripts: { prestart: 'echo pre', start: 'node a.js', poststart: 'echo post' } };
    expect(planLaunch({ ...base, pkg, ctx: at({}) }).hooks).toEqual({ prestart: 'echo pre', poststart: 'echo post' });
    expect(planLaunch({ ...base, pkg, ctx: at({ CC_RUN_COMMAND: 'node b.js' }) }).hooks).toEqual({});
  });
  it('keeps the Plug-n-Play flags the pnp launch layer appended to NODE_OPTIONS, and adds the memory flag after them', () => {
    const ctx = at({ NODE_OPTIONS: '--require /workspace/.pnp.cjs', RBP_INSTANCE_MEMORY: String(1024 * 1024 * 1024) });
    const p = planLaunch({ ...base, decision: { ...decision, pnp: true }, pkg: { main: 'a.js' }, ctx });
    expect(p.env.NODE_OPTIONS).toBe('--require /workspace/.pnp.cjs --max-old-space-size=768');
    expect(p.facts.pnp).toBe(true);
  });
  it('fails clearly when there is nothing to start', () => {
    expect(() => planLaunch({ ...base, pkg: {}, ctx: at({}) })).toThrow(/Nothing to start/);
  });
});
