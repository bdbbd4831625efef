/**
 * Build plan resolution, as the reference lifecycle does it (phase/detector.go runTrials/Resolve):
 * each passing buildpack offers its top-level plan and then each `[[or]]`; trials are their
 * cartesian product, depth first; the first trial where every require has a provide in the same or
 * an earlier buildpack, and every provide a later require, wins. An optional buildpack whose trial
 * fails is dropped, but only on its last alternative.
 */
import type { BuildPlan, PlanSection, Require } from '../cnb/plan.ts';

export interface Candidate<T> {
  key: string;
  item: T;
  optional: boolean;
  plan: BuildPlan;
}

interface Option<T> {
  c: Candidate<T>;
  optional: boolean;
  section: PlanSection;
}

export interface PlanEntry<T> {
  providers: T[];
  requires: Require[];
}

export interface Resolution<T> {
  group: T[];
  entries: PlanEntry<T>[];
  log: string[];
}

function options<T>(c: Candidate<T>): Option<T>[] {
  const sections: PlanSection[] = [{ provides: c.plan.provides ?? [], requires: c.plan.requires ?? [] }, ...(c.plan.or ?? [])];
  return sections.map((section, i) => ({ c, section, optional: c.optional && i === sections.length - 1 }));
}

interface Dep<T> {
  providers: Option<T>[];
  extraProvides: Option<T>[];
  earlyRequires: Option<T>[];
  requires: Require[];
}

function depMap<T>(trial: Option<T>[]): Map<string, Dep<T>> {
  const m = new Map<string, Dep<T>>();
  const get = (name: string) => {
    let d = m.get(name);
    if (!d) m.set(name, (d = { providers: [], extraProvides: [], earlyRequires: [], requires: [] }));
    return d;
  };
  for (const o of trial) {
    for (const p of o.section.provides ?? []) get(p.name).extraProvides.push(o);
    for (const r of o.section.requires ?? []) {
      const d = get(r.name);
      d.providers.push(...d.extraProvides);
      d.extraProvides = [];
      if (d.providers.length === 0) d.earlyRequires.push(o);
      else d.requires.push(r);
    }
  }
  return m;
}

function tryTrial<T>(start: Option<T>[], log: string[]): { deps: Map<string, Dep<T>>; trial: Option<T>[] } | undefined {
  let trial = [...start];
  for (;;) {
    const deps = depMap(trial);
    let retry = false;
    for (const [kind, pick] of [
      ['requires', (d: Dep<T>) => d.earlyRequires],
      ['provides unused', (d: Dep<T>) => d.extraProvides],
    ] as const) {
      for (const [name, d] of deps) {
        for (const o of pick(d)) {
          retry = true;
          if (!o.optional) {
            log.push(`fail: ${o.c.key} ${kind} ${name}`);
            return undefined;
          }
          log.push(`skip: ${o.c.key} ${kind} ${name}`);
          trial = trial.filter((x) => x.c !== o.c);
        }
      }
      if (retry) break;
    }
    if (!retry) return trial.length ? { deps, trial } : undefined;
  }
}

/** `log` receives why trials failed, also when none resolves (the caller shows it either way). */
export function resolvePlan<T>(passed: Candidate<T>[], log: string[] = []): Resolution<T> | undefined {
  const walk = (i: number, acc: Option<T>[]): ReturnType<typeof tryTrial<T>> => {
    if (i === passed.length) return tryTrial(acc, log);
    for (const o of options(passed[i]!)) {
      const r = walk(i + 1, [...acc, o]);
      if (r) return r;
    }
    return undefined;
  };
  const r = walk(0, []);
  if (!r) return undefined;
  const entries: PlanEntry<T>[] = [];
  for (const d of r.deps.values()) {
    if (d.requires.length) entries.push({ providers: [...new Set(d.providers.map((o) => o.c.item))], requires: d.requires });
  }
  return { group: r.trial.map((o) => o.c.item), entries, log };
}
