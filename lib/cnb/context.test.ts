import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { buildContext, detectContext } from './context.ts';
import { writeBuildpackPlan } from './plan.ts';
import { writePlatformEnv } from './env.ts';

const saved = { ...process.env };
afterEach(() => {
  for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
  Object.assign(process.env, saved);
});

function lifecycleEnv(): { layers: string; plan: string } {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'cnb-ctx-'));
  const bp = path.join(root, 'bp');
  fs.mkdirSync(bp);
  fs.writeFileSync(path.join(bp, 'buildpack.toml'), 'api = "0.10"\n[buildpack]\nid = "t/x"\nversion = "1.0.0"\n');
  writePlatformEnv(path.join(root, 'platform'), { CC_FROM_PLATFORM: 'yes' });
  const plan = path.join(root, 'plan.toml');
  writeBuildpackPlan(plan, { entries: [{ name: 'node', metadata: { version: '22' } }] });
  Object.assign(process.env, {
    CNB_PLATFORM_DIR: path.join(root, 'platform'),
    CNB_BUILDPACK_DIR: bp,
    CNB_BUILD_PLAN_PATH: path.join(root, 'detect-plan.toml'),
    CNB_LAYERS_DIR: path.join(root, 'layers'),
    CNB_BP_PLAN_PATH: plan,
  });
  return { layers: path.join(root, 'layers'), plan };
}

describe('buildpack contexts from the lifecycle environment', () => {
  it('detect: platform env on top of the process env, the descriptor and the plan path', () => {
    lifecycleEnv();
    const ctx = detectContext();
    expect(ctx.env.CC_FROM_PLATFORM).toBe('yes');
    expect(ctx.descriptor.buildpack.id).toBe('t/x');
    expect(ctx.planPath).toBe(process.env.CNB_BUILD_PLAN_PATH);
    expect(ctx.appDir).toBe(process.cwd());
  });

  it('build: the layers dir and the buildpack plan', () => {
    const { layers } = lifecycleEnv();
    const ctx = buildContext();
    expect(ctx.layersDir).toBe(layers);
    expect(ctx.layers.dir).toBe(layers);
    expect(ctx.plan).toEqual({ entries: [{ name: 'node', metadata: { version: '22' } }] });
  });

  it('says which variable is missing when not run by a lifecycle', () => {
    lifecycleEnv();
    delete process.env.CNB_LAYERS_DIR;
    expect(() => buildContext()).toThrow('CNB_LAYERS_DIR is not set');
  });
});
