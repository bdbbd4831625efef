/**
 * The build plan a buildpack writes at detect (provides/requires/or), the buildpack plan it reads at
 * build, and build.toml's [[unmet]] (cnb-spec.md §3).
 */
import fs from 'node:fs';
import { readTomlIfExists, writeToml } from './toml.ts';

export interface Provide {
  name: string;
}
export interface Require {
  name: string;
  metadata?: Record<string, unknown>;
}
export interface PlanSection {
  provides?: Provide[];
  requires?: Require[];
}
export interface BuildPlan extends PlanSection {
  or?: PlanSection[];
}

export interface BuildpackPlanEntry {
  name: string;
  metadata?: Record<string, unknown>;
}
export interface BuildpackPlan {
  entries: BuildpackPlanEntry[];
}

function checkSection(s: PlanSection, where: string): void {
  for (const r of s.requires ?? []) {
    if (typeof r.name !== 'string' || r.name === '') throw new Error(`${where}: a [[requires]] has no name`);
    if ('version' in r) throw new Error(`${where}: top-level "version" in [[requires]] ${r.name} is not allowed; put it in [requires.metadata]`);
  }
  for (const p of s.provides ?? []) {
    if (typeof p.name !== 'string' || p.name === '') throw new Error(`${where}: a [[provides]] has no name`);
  }
}

export function validateBuildPlan(plan: BuildPlan, where = 'build plan'): BuildPlan {
  checkSection(plan, where);
  (plan.or ?? []).forEach((o, i) => checkSection(o, `${where} [[or]] #${i}`));
  return plan;
}

export function writeBuildPlan(file: string, plan: BuildPlan): void {
  writeToml(file, validateBuildPlan(plan) as Record<string, unknown>);
}

/** Reads what bin/detect wrote; an empty file is an empty plan. */
export function readBuildPlan(file: string): BuildPlan {
  const plan = readTomlIfExists<BuildPlan>(file) ?? {};
  return validateBuildPlan(plan, file);
}

export function readBuildpackPlan(file: string): BuildpackPlan {
  const p = readTomlIfExists<Partial<BuildpackPlan>>(file) ?? {};
  return { entries: p.entries ?? [] };
}

export function writeBuildpackPlan(file: string, plan: BuildpackPlan): void {
  // As the lifecycle: a buildpack with nothing in its plan gets an empty file, not `entries = []`.
  if (plan.entries.length === 0) fs.writeFileSync(file, '');
  else writeToml(file, { entries: plan.entries });
}

/** build.toml's [[unmet]]: entries of this buildpack's plan that it did not meet go on to the next provider. */
export function readUnmet(file: string): string[] {
  if (!fs.existsSync(file)) return [];
  const t = readTomlIfExists<{ unmet?: { name?: string }[] }>(file) ?? {};
  return (t.unmet ?? []).map((u) => {
    if (typeof u.name !== 'string' || !u.name) throw new Error(`${file}: [[unmet]] without a name`);
    return u.name;
  });
}
