/**
 * The one reader of platform variables. Every value is trimmed once here, and a value that is
 * empty or only whitespace counts as unset everywhere (a `CC_REDIRECTOR_PROJECT_KEY=" "` activates
 * nothing). A value that breaks its kind's rule is a user error with one id per variable:
 * `config/<variable>/invalid`; a secret's value is never shown.
 */
import { UserError } from '../errors.ts';
import { describeKind, type Setting, type VariableSpec } from './kinds.ts';
import { VARIABLES } from './variables.ts';

type Env = Record<string, string | undefined>;

/** The value of `name`, trimmed; undefined when unset, empty or whitespace only. */
export function raw(env: Env, name: string): string | undefined {
  const v = env[name]?.trim();
  return v ? v : undefined;
}

/** Whether `name` is set to something other than whitespace. */
export function isSet(env: Env, name: string): boolean {
  return raw(env, name) !== undefined;
}

export function spec(name: string): VariableSpec {
  const s = VARIABLES.find((v) => v.name === name);
  if (!s) throw new Error(`lib/config: ${name} is not declared in variables.ts`);
  return s;
}

export function invalid(s: VariableSpec, value: string, why?: string): UserError {
  const secret = s.kind.type === 'secret';
  return new UserError({
    id: `config/${s.name}/invalid`,
    title: `Invalid ${s.name}`,
    seen: { what: s.name, value: secret ? '(hidden: a secret)' : value },
    rule: `${s.name} is ${describeKind(s.kind)}${why ? `: ${why}` : ''} (${s.rule}).`,
    fix: s.default !== undefined ? `Set ${s.name} to a valid value, or unset it for the default ${JSON.stringify(s.default)}.` : `Set ${s.name} to a valid value, or unset it.`,
  });
}

/** Parses `text` by the variable's kind; throws the variable's user error when it breaks the rule. */
function parse(s: VariableSpec, text: string): string | number | string[] {
  const k = s.kind;
  switch (k.type) {
    case 'port': {
      const n = Number(text);
      if (!/^\d+$/.test(text) || !Number.isInteger(n) || n < 1 || n > 65535) throw invalid(s, text);
      return n;
    }
    case 'enum':
      if (!k.values.includes(text)) throw invalid(s, text);
      return text;
    case 'version':
      if (!k.pattern.test(text)) throw invalid(s, text);
      return text;
    case 'url-path':
      // eslint-disable-next-line no-control-regex
      if (!text.startsWith('/') || /[\s\u0000-\u001f\u007f]/.test(text)) throw invalid(s, text, text.startsWith('/') ? 'spaces and control characters must be percent-encoded (%20)' : 'it must start with /');
      return text;
    case 'seconds': {
      const n = Number(text);
      if (!Number.isFinite(n) || n <= 0) throw invalid(s, text);
      return n;
    }
    case 'date':
      if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(Date.parse(text))) throw invalid(s, text);
      return text;
    case 'host':
      if (/[\s/]/.test(text.replace(/^https?:\/\//, '').replace(/\/+$/, ''))) throw invalid(s, text);
      return text;
    case 'path-list':
    case 'list':
      return text
        .split(k.separator)
        .map((x) => x.trim())
        .filter(Boolean);
    default:
      return text;
  }
}

/**
 * The setting of `name` in `env`: its parsed value and where it came from (the environment, or
 * the declared default); undefined when unset with no default.
 */
export function read<T = string>(env: Env, name: string): Setting<T> | undefined {
  const s = spec(name);
  const text = raw(env, name);
  if (text !== undefined) return { value: parse(s, text) as T, source: 'env' };
  if (s.default !== undefined) return { value: parse(s, s.default) as T, source: 'default' };
  return undefined;
}

/** Like read(), for a port: its number. */
export function readPort(env: Env, name: string): Setting<number> | undefined {
  return read<number>(env, name);
}
