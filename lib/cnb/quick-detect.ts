/**
 * What one of our buildpacks' bin/detect answers by itself, with no Node.js start (lib/cnb/sh/
 * bootstrap.sh): the answers that the app's root files decide alone, when none of the variables that
 * could change them is set. Each buildpack's detect (src/detect.ts) exports its `quick` data, made
 * with the same functions its full detect answers with; the build writes it beside the bundle as
 * lib/detect-quick.sh, sh assignments that bin/detect sources: one buffered read, where a loop of
 * `read` would read the file a byte per system call.
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

/** A word for sh: single-quoted. */
const sq = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/** The data bin/detect sources: the variables and files as lists, each pass as a case, the plan as text. */
export function quickFiles(q: QuickDetect): string {
  for (const v of q.variables) if (!/^[A-Za-z_]\w*$/.test(v)) throw new Error(`quick detect: "${v}" is not a variable name`);
  for (const f of q.files) if (!/^[\w.][\w./-]*$/.test(f)) throw new Error(`quick detect: "${f}" is not a plain file name`);
  const passes = Object.entries(q.passes ?? {}).map(([f, said]) => `  ${sq(f)}) said=${sq(said)} ;;`);
  return [
    `q_variables=${sq(q.variables.join(' '))}`,
    `q_files=${sq(q.files.join(' '))}`,
    `q_pass() {\n  case $1 in\n${[...passes, '  *) return 1 ;;'].join('\n')}\n  esac\n}`,
    `q_plan=${sq(q.plan ? tomlString(validateBuildPlan(q.plan) as Record<string, unknown>) : '')}`,
    `q_declined=${sq(q.declined)}`,
    '',
  ].join('\n');
}
