/**
 * What a platform variable may hold, as data: each kind knows how to turn the raw text into a
 * value or say which rule it broke. The reader (read.ts) applies them; nothing else parses a
 * variable's text.
 */
export type Kind =
  | { type: 'string' }
  | { type: 'command' }
  | { type: 'flags' }
  | { type: 'secret' }
  | { type: 'enum'; values: readonly string[] }
  | { type: 'port' }
  | { type: 'version'; pattern: RegExp; shape: string }
  | { type: 'url-path' }
  | { type: 'app-path' }
  | { type: 'path-list'; separator: string }
  | { type: 'list'; separator: string }
  | { type: 'host' }
  | { type: 'date' }
  | { type: 'seconds' }
  | { type: 'bool' }
  | { type: 'bytes' }
  | { type: 'path' };

export type Phase = 'build' | 'launch' | 'both';
export type Scope = 'common' | 'node' | 'static' | 'phpserver' | 'operator' | 'internal';

export interface VariableSpec {
  /**
   * The variable's name; a family of variables writes its varying part in angle brackets
   * (`CC_HEALTH_CHECK_PATH_<n>`: digits, `RBP_TOOL_<NAME>`: capitals, digits and _).
   */
  name: string;
  kind: Kind;
  /** The default as the contract states it (text), when there is one. */
  default?: string;
  /** Where the rule comes from: a section or rule of the contract, or rbp's own operator setting. */
  rule: string;
  phase: Phase;
  scope: Scope;
  /** One line for the README tables. */
  meaning: string;
  /** The fix an invalid value's error gives, when a better one than "set a valid value" exists. */
  fix?: string;
}

export interface Setting<T> {
  value: T;
  /** `env`: set in the environment; `default`: the declared default. */
  source: 'env' | 'default';
}

/** Each kind described for users; a kind with none is named by its type (`string`, `command`, `flags`). */
const DESCRIPTIONS: { [T in Kind['type']]?: string | ((k: Extract<Kind, { type: T }>) => string) } = {
  enum: (k) => `one of ${k.values.join(', ')}`,
  port: 'a port number, a whole number from 1 to 65535',
  version: (k) => k.shape,
  'url-path': 'a URL path (a missing leading / is added; spaces and non-ASCII are percent-encoded)',
  'app-path': 'a path inside the application',
  'path-list': (k) => `paths inside the application separated by ${JSON.stringify(k.separator)}`,
  list: (k) => `a list separated by ${JSON.stringify(k.separator)}`,
  host: 'a host name (with a port or a path if needed), or an http(s) URL without credentials',
  date: 'an ISO date (YYYY-MM-DD)',
  secret: 'a secret (never printed)',
  seconds: 'a number of seconds greater than 0',
  bool: '1, true or yes (on); 0, false or no (off)',
  bytes: 'a number of bytes greater than 0',
  path: 'a path on the machine that runs rbp or the buildpack',
};

/** A kind described for users: the `Rule:` line of its error and the README's type column. */
export function describeKind(k: Kind): string {
  const d = DESCRIPTIONS[k.type] as string | ((k: Kind) => string) | undefined;
  return typeof d === 'function' ? d(k) : (d ?? k.type);
}

/**
 * A path as an HTTP request target: bytes that may not appear there (space, control characters,
 * non-ASCII, `"<>\\^`{|}`) are percent-encoded as UTF-8, the rest (including `%`, `?`, `&`) is kept
 * as written. `/a b` is `/a%20b`.
 */
export function requestTarget(p: string): string {
  return p.replace(/[^\x21-\x7e]|["<>\\^`{|}]/gu, (c) => [...Buffer.from(c, 'utf8')].map((b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join(''));
}
