/**
 * User errors are data: a stable id, a title, what was seen, the rule that was broken and the fix.
 * One renderer prints them; tests snapshot the rendering. Anything that is not a UserError is a bug
 * in this project and is printed with its stack.
 */
import { VARIABLES } from './config/variables.ts';

export interface Seen {
  /** The variable, file or flag, e.g. `CC_NODE_BUILD_TOOL` or `package.json`. */
  what: string;
  /** The value as found (already redacted when it is a secret). */
  value?: string;
  /** Where it came from, e.g. `the platform environment` or an absolute path. */
  where?: string;
}

export interface UserErrorData {
  id: string;
  title: string;
  seen?: Seen;
  rule: string;
  fix: string;
  /** Extra lines (a tool's own message, a list of accepted values). */
  details?: string[];
}

export class UserError extends Error {
  readonly data: UserErrorData;
  constructor(data: UserErrorData) {
    super(`${data.title} [${data.id}]`);
    this.name = 'UserError';
    this.data = data;
  }
  get id(): string {
    return this.data.id;
  }
}

export function isUserError(e: unknown): e is UserError {
  return e instanceof UserError || (e instanceof Error && e.name === 'UserError' && 'data' in e);
}

/** Renders a user error as one block: no stack trace. */
export function renderUserError(e: UserErrorData): string {
  const lines = [`! ERROR ${e.title}`, `!`];
  if (e.seen) {
    const value = e.seen.value === undefined ? '' : `: ${JSON.stringify(e.seen.value)}`;
    lines.push(`! Seen: ${e.seen.what}${value}${e.seen.where ? ` (${e.seen.where})` : ''}`);
  }
  lines.push(`! Rule: ${e.rule}`);
  for (const d of e.details ?? []) lines.push(`!   ${d}`);
  // A fix of several lines (a file to add) keeps each line under the Fix: column.
  lines.push(`! Fix:  ${e.fix.split('\n').join('\n!       ')}`);
  lines.push(`! (error id: ${e.id})`);
  return lines.join('\n');
}

/** Secrets the platform knows about (lib/config declares them, kind `secret`): never printed, stored or exported. */
export const SECRET_VARIABLES = new Set(VARIABLES.filter((v) => v.kind.type === 'secret').map((v) => v.name));

export function isSecretName(name: string): boolean {
  return SECRET_VARIABLES.has(name) || /(TOKEN|SECRET|PASSWORD|PASSWD|_KEY|CREDENTIALS?)$/i.test(name);
}

const SECRET_PARAM = /^(token|access_token|auth|key|api_key|apikey|secret|password|sig|signature|x-amz-signature|x-amz-credential|x-amz-security-token)$/i;

/** Hides credentials in every URL in `text`: `user:pass@` → `user:***@`, `token@` → `***@`, `?token=x` → `?token=***`. */
export function redactUrl(text: string): string {
  // Bounded scheme and parameter-name lengths: unbounded ones make these patterns quadratic on a long
  // value without a URL.
  return text
    .replace(/([a-z][a-z0-9+.-]{0,31}:\/\/)([^/\s:@]+):([^/\s@]+)@/gi, '$1$2:***@')
    .replace(/([a-z][a-z0-9+.-]{0,31}:\/\/)([^/\s:@]+)@/gi, '$1***@')
    .replace(/([?&])([^=&\s#?]{1,128})=([^&\s#]*)/g, (m, sep: string, k: string) => (SECRET_PARAM.test(k) ? `${sep}${k}=***` : m));
}

export function redactEnv(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) continue;
    out[k] = isSecretName(k) ? '***' : redactUrl(v);
  }
  return out;
}

/** A user error as --json shows it: its id, a one-line message, the rule, the fix, what was seen. */
export function errorJson(e: UserErrorData): { id: string; message: string; rule: string; fix: string; seen?: Seen; details?: string[] } {
  return { id: e.id, message: e.title, rule: e.rule, fix: e.fix, ...(e.seen ? { seen: e.seen } : {}), ...(e.details?.length ? { details: e.details } : {}) };
}

/**
 * The last error block `renderUserError` wrote in `text` (a buildpack's output, colours and indent
 * included), read back: id, title, rule and fix. Undefined when there is none.
 */
export function parseRenderedError(text: string): UserErrorData | undefined {
  const lines = text
    // eslint-disable-next-line no-control-regex -- the ANSI colour escapes renderUserError wrote
    .replace(/\u001b\[[0-9;]*m/g, '')
    .split(/\r?\n/)
    .map((l) => l.trim());
  let end = lines.length - 1;
  while (end >= 0 && !/^! \(error id: [^)\s]+\)$/.test(lines[end]!)) end--;
  let start = end - 1;
  while (start >= 0 && !lines[start]!.startsWith('! ERROR ')) start--;
  if (end < 0 || start < 0) return undefined;
  const block = lines.slice(start, end + 1);
  const field = (prefix: string) =>
    block
      .find((l) => l.startsWith(prefix))
      ?.slice(prefix.length)
      .trim() ?? '';
  return { id: /^! \(error id: ([^)\s]+)\)$/.exec(lines[end]!)![1]!, title: block[0]!.slice('! ERROR '.length), rule: field('! Rule:'), fix: field('! Fix:') };
}
