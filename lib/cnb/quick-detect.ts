/**
 * What one of our buildpacks' bin/detect answers by itself, with no Node.js start (lib/cnb/sh/
 * bootstrap.sh): the answers that the app's root files decide alone, when none of the variables that
 * could change them is set. Each buildpack's detect (src/detect.ts) exports its `quick` data, made
 * with the same functions its full detect answers with; the build writes it beside the bundle as
 * lib/detect-quick and lib/detect-plan.toml.
 */
import { tomlString } from './toml.ts';
import { validateBuildPlan, type BuildPlan } from './plan.ts';
import { FOREIGN_VARIABLES, VARIABLES } from '../config/variables.ts';

export interface QuickDetect {
  /** Variables (a platform env file or the process environment) whose presence sends the question to the full detect. */
  variables: readonly string[];
  /** The root files the detect looks at, in the order it looks: the first one there decides. */
  files: readonly string[];
  /** A first file (a regular file, not a link) that makes the detect pass, with what it says. */
  passes?: Readonly<Record<string, string>>;
  /** The plan it writes when it passes. */
  plan?: BuildPlan;
  /** What it says when none of `files` is there (it declines); `{app}` stands for the app folder's physical path. */
  declined: string;
}

/** Every variable a runtime's detect may read: its own, the common ones, and other platforms' that mean one of them. */
export function detectVariables(runtime: 'node' | 'static' | 'phpserver'): string[] {
  return [
    ...VARIABLES.filter((v) => (v.scope === 'common' || v.scope === runtime) && !v.name.includes('<')).map((v) => v.name),
    ...FOREIGN_VARIABLES.filter((f) => f.runtime === runtime).map((f) => f.name),
  ];
}

/** The data bin/detect reads, one `key value` line each; the plan as its own TOML file. */
export function quickFiles(q: QuickDetect): { data: string; plan: string } {
  for (const v of q.variables) if (!/^[A-Za-z_]\w*$/.test(v)) throw new Error(`quick detect: "${v}" is not a variable name`);
  for (const f of q.files) if (!/^[\w.][\w./-]*$/.test(f)) throw new Error(`quick detect: "${f}" is not a plain file name`);
  const lines = [
    ...q.variables.map((v) => `variable ${v}`),
    ...q.files.map((f) => `file ${f}`),
    ...Object.entries(q.passes ?? {}).map(([f, said]) => `pass ${f} ${said}`),
    `declined ${q.declined}`,
  ];
  if (lines.some((l) => l.includes('\n'))) throw new Error('quick detect: a line holds a newline');
  return { data: `${lines.join('\n')}\n`, plan: q.plan ? tomlString(validateBuildPlan(q.plan) as Record<string, unknown>) : '' };
}
