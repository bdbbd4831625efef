/**
 * Variables a runtime's plan derives from the run environment itself (the node runtime's HOST,
 * PATH and NODE_OPTIONS), as rules rather than code: the Node.js launcher applies them when it
 * plans (plan.ts `planLaunch`), and the direct launch script, written at build, carries them out in
 * sh at run time (direct.ts). A plan that reads these variables directly would tie the script to
 * their values at build (PATH at build is the build's own), and every launch would hand over to
 * the Node.js launcher; a plan that states them as rules is written as a script and starts its app
 * with no Node.js in front (issue 27: a warm redeploy, a launcher that weighs nothing).
 */
import { shQuote } from '../config/shell.ts';

export type RunEnvRule =
  /** The run environment's value when it is set (even empty), else `fallback`: HOST. */
  | { kind: 'default'; name: string; fallback: string }
  /**
   * `dirs`, then the run environment's value (else `fallback`), joined with ':': PATH. (A launch always
   * has a PATH; a shell started without one makes up its own, which then stands for `fallback`.)
   */
  | { kind: 'prepend'; name: string; dirs: string[]; fallback: string }
  /**
   * The run environment's value with `<flag>=<MiB>` appended (`numerator/denominator` of the instance
   * memory, in MiB, rounded down) when the instance memory is known and the value has no such flag
   * already (`pattern`, an sh glob that is also read as a regular expression); left as it is
   * otherwise, and not set when it ends up empty: NODE_OPTIONS' --max-old-space-size.
   */
  | { kind: 'memory-flag'; name: string; flag: string; pattern: string; numerator: number; denominator: number };

const MiB = 1024 * 1024;

/** The memory-flag rule's value, for a current value and the instance memory (bytes). */
export function withMemoryFlag(
  rule: Extract<RunEnvRule, { kind: 'memory-flag' }>,
  current: string | undefined,
  memoryBytes: number | undefined,
): string | undefined {
  if (current && new RegExp(rule.pattern).test(current)) return current;
  if (!memoryBytes) return current;
  const flag = `${rule.flag}=${Math.floor((memoryBytes * rule.numerator) / rule.denominator / MiB)}`;
  return current?.trim() ? `${current.trim()} ${flag}` : flag;
}

/** The rules applied to the run environment: the variables they set, in order. */
export function applyRunEnv(rules: readonly RunEnvRule[], env: NodeJS.ProcessEnv, memoryBytes: number | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const rule of rules) {
    const current = env[rule.name];
    switch (rule.kind) {
      case 'default':
        out[rule.name] = current ?? rule.fallback;
        break;
      case 'prepend':
        out[rule.name] = [...rule.dirs, current ?? rule.fallback].join(':');
        break;
      case 'memory-flag': {
        const v = withMemoryFlag(rule, current, memoryBytes);
        if (v) out[rule.name] = v;
        break;
      }
    }
  }
  return out;
}

/**
 * The same rules in sh: each variable set and exported. `word` renders a value (the direct script
 * splices its app folder in); the instance memory in bytes is in `$mem` (empty when unknown), read
 * by the script as the Node.js launcher reads it (instance.ts: RBP_INSTANCE_MEMORY, else the
 * cgroup limit). The JavaScript regular expression of a memory-flag rule is used as an sh glob: it
 * holds only letters, dashes and bracket expressions, which read the same in both.
 */
export function runEnvLines(rules: readonly RunEnvRule[], word: (text: string) => string = shQuote): string[] {
  return rules.flatMap((rule) => {
    const n = rule.name;
    switch (rule.kind) {
      case 'default':
        return [`${n}=\${${n}-${word(rule.fallback)}}; export ${n}`];
      case 'prepend':
        return [`${n}=${rule.dirs.map(word).join("':'")}:\${${n}-${word(rule.fallback)}}; export ${n}`];
      case 'memory-flag':
        if (!/^[\w[\]-]+$/.test(rule.pattern)) throw new Error(`lib/launch/run-env.ts: ${n}'s pattern ${rule.pattern} does not read the same as an sh glob`);
        return [
          `trim "\${${n}-}"; o=$t`,
          `case "$o" in *${rule.pattern}*) ;; *)`,
          `  if [ -n "$mem" ]; then f=${shQuote(rule.flag)}=$((mem * ${rule.numerator} / ${rule.denominator} / ${MiB})); o=\${o:+$o }$f; ${n}=$o; fi ;;`,
          'esac',
          `[ -z "\${${n}-}" ] || export ${n}`,
        ];
    }
  });
}

/**
 * sh that reads the instance memory into `$mem` (bytes, or empty), as instance.ts does: a valid
 * RBP_INSTANCE_MEMORY (the caller's reader has handed an invalid one over), else the cgroup v2 or
 * v1 limit when it is a number below 2^50 (v1 says "no limit" with a number close to 2^63).
 */
export const MEMORY_LINES = [
  'if [ -z "$mem" ]; then',
  '  for f in /sys/fs/cgroup/memory.max /sys/fs/cgroup/memory/memory.limit_in_bytes; do',
  '    [ -r "$f" ] || continue',
  '    l=; read -r l 2>/dev/null <"$f" || [ -n "$l" ] || continue',
  '    case $l in "" | *[!0-9]*) continue ;; esac',
  '    [ ${#l} -le 16 ] || continue',
  '    unzero "$l"',
  `    if [ -n "$z" ] && [ "$z" -gt 0 ] && [ "$z" -lt ${2 ** 50} ]; then mem=$z; break; fi`,
  '  done',
  'fi',
];
