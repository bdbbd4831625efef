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
  | { type: 'seconds' };

export type Phase = 'build' | 'launch' | 'both';
export type Scope = 'common' | 'node' | 'static' | 'phpserver' | 'operator';

export interface VariableSpec {
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
}

export interface Setting<T> {
  value: T;
  /** `env`: set in the environment; `default`: the declared default. */
  source: 'env' | 'default';
}

/** A kind described for users: the `Rule:` line of its error and the README's type column. */
export function describeKind(k: Kind): string {
  switch (k.type) {
    case 'enum':
      return `one of ${k.values.join(', ')}`;
    case 'port':
      return 'a port number, a whole number from 1 to 65535';
    case 'version':
      return k.shape;
    case 'url-path':
      return 'a URL path starting with /, without spaces or control characters';
    case 'app-path':
      return 'a path inside the application';
    case 'path-list':
      return `paths inside the application separated by ${JSON.stringify(k.separator)}`;
    case 'list':
      return `a list separated by ${JSON.stringify(k.separator)}`;
    case 'host':
      return 'a host name, optionally with a port (no scheme, no path)';
    case 'date':
      return 'an ISO date (YYYY-MM-DD)';
    case 'secret':
      return 'a secret (never printed)';
    case 'seconds':
      return 'a number of seconds greater than 0';
    default:
      return k.type;
  }
}
