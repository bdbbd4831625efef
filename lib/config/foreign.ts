/**
 * Other platforms' variables (declared in variables.ts, FOREIGN_VARIABLES), adopted once at the start
 * of a runtime's detect and build: a Paketo `BP_*` variable that means the same as a contract
 * variable fills that one in when it is unset, converted to the contract's shape and checked by its
 * rule (a value it breaks is the foreign variable's own `config/<name>/invalid`); the contract
 * variable always wins. What was adopted, ignored or has no equivalent comes back as log lines.
 */
import { describeKind } from './kinds.ts';
import { invalid, raw, spec } from './read.ts';
import { FOREIGN_VARIABLES, type ForeignVariable } from './variables.ts';

type Env = Record<string, string | undefined>;

/** Paketo writes versions as semver constraints: `20.*`, `20.x`, `~20`, `v20.10` mean the line `20`, `20.10`. */
function majorMinor(value: string): string {
  return value.replace(/^[v~=]+/, '').replace(/(\.(x|X|\*))+$/, '');
}

/** The contract variable's value for a foreign one; its rule is checked here, naming the foreign variable. */
function converted(f: ForeignVariable, value: string): string {
  const target = spec(f.means!);
  const v = f.convert === 'major-minor' ? majorMinor(value) : value;
  const ok = target.kind.type === 'enum' ? target.kind.values.includes(v) : target.kind.type === 'version' ? target.kind.pattern.test(v) : true;
  if (!ok) {
    const fix = `Set ${f.name} to ${describeKind(target.kind)}, or set ${f.means} instead (the contract's variable wins)${f.means === 'CC_NODE_VERSION' ? '; a semver range belongs in engines.node of package.json' : ''}.`;
    throw invalid({ ...target, fix }, value, `${f.platform}'s ${f.name} is read as ${f.means}`, f.name);
  }
  return v;
}

/**
 * Fills `env` (the build's, changed in place) with the contract variables the runtime's foreign
 * variables mean, where unset; returns one log line per foreign variable set.
 */
export function adoptForeignVariables(env: Env, runtime: ForeignVariable['runtime']): string[] {
  const notes: string[] = [];
  for (const f of FOREIGN_VARIABLES.filter((x) => x.runtime === runtime)) {
    const value = raw(env, f.name);
    if (value === undefined) continue;
    if (!f.means) {
      notes.push(`${f.name}=${value} (${f.platform}) has no equivalent here: ${f.hint}`);
      continue;
    }
    const ours = raw(env, f.means);
    if (ours !== undefined) {
      notes.push(`${f.name}=${value} (${f.platform}) is ignored: ${f.means} is set (${f.means}=${ours})`);
      continue;
    }
    const v = converted(f, value);
    env[f.means] = v;
    notes.push(`${f.name}=${value} (${f.platform}) is read as ${f.means}=${v}: ${f.means} is unset`);
  }
  return notes;
}
