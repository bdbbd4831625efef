/**
 * The one schema of `fixtures/<app>/test.json`, for every runtime, and its strict reader: a key the
 * schema does not know is an error naming the file and the key (a typo such as `exepct` or
 * `notlog` would otherwise make a check silently vanish). test/helpers/fixture-driver.ts runs the
 * cases.
 *
 * A fixture is a description and cases; a case is the variables of one build and what must happen:
 * the build passes or fails (at detect or build), its log, its error id, the files it leaves (or
 * exactly the ones it keeps), the launch plan (`rbp run --dry-run`), a task, and HTTP checks on the
 * app served for real.
 */
import fs from 'node:fs';
import path from 'node:path';
import { FIXTURES } from './rbp.ts';

export interface HttpCheck {
  path: string;
  status: number;
  contains?: string;
  /** Text that must not be in the body (a file outside the webroot). */
  notContains?: string;
  /** A response header and its exact value. */
  header?: [string, string];
  /** Send the cookies the case's earlier checks received (a session). */
  withCookies?: boolean;
}

export interface Case {
  name: string;
  /** The application environment (`rbp build --env`). */
  env?: Record<string, string>;
  /** Variables of `rbp run` (`--env`), for the launch plan and the HTTP checks. */
  runEnv?: Record<string, string>;
  /** Variables of rbp's own environment during the build (RBP_*). */
  operatorEnv?: Record<string, string>;
  /** `rbp build --task`. */
  task?: string;
  /** `rbp build --instance`. */
  instance?: string;
  /** phpserver: the HTTP checks need no application server (a CC_RUN_COMMAND case). */
  serveWithoutServer?: boolean;
  /** Servers the HTTP checks need (test/helpers/services.ts), started for the case: the app gets <NAME>_HOST and <NAME>_PORT. */
  services?: ('redis' | 'memcached')[];
  /** phpserver: PHP extensions the HTTP checks need in the server's PHP. */
  needsPhpExtensions?: string[];
  /** phpserver: the build itself needs the real application server (its extension list, its PHP CLI). */
  needsServer?: boolean;
  expect: {
    build: 'pass' | 'fail';
    /** Where a failing build stops; default build. */
    stage?: 'detect' | 'build';
    log?: string[];
    notLog?: string[];
    /** How many times a line occurs in the build's log. */
    count?: Record<string, number>;
    errorId?: string;
    files?: { present?: string[]; absent?: string[]; contains?: Record<string, string> };
    /**
     * The exact content of the built application: its files and folders, relative; a folder listed
     * without any of its content stands for all of it (`cc_static_autobuilt`). See keptView().
     */
    kept?: string[];
    /** static: the server the launch plan names (its command line, in `launch`, says how Caddy runs). */
    server?: 'static-web-server' | 'caddy';
    /** static: the generator's command line, as logged. */
    command?: string;
    launch?: { argv: string[]; env?: Record<string, string>; server?: Record<string, string> };
    task?: { exitCode: number; contains: string[] };
    http?: HttpCheck[];
    /** How the served app ends on SIGTERM when not 0 or 143: Yarn 1's `yarn run` forwards the signal, then exits 1. */
    stopStatus?: number;
    afterStop?: { present?: string[] };
    /** A second build with the first one's cache: its log. */
    rebuild?: { log?: string[]; notLog?: string[]; count?: Record<string, number> };
  };
}

export interface FixtureSpec {
  description: string;
  /** phpserver: the app gets a composer.phar made from the machine's Composer. */
  needsComposerPhar?: boolean;
  cases: Case[];
}

/** The schema as data: what each object may hold, its required keys and each value's shape. */
type Shape =
  | 'string'
  | 'number'
  | 'boolean'
  | { enum: readonly string[] }
  | { list: Shape }
  | { map: Shape }
  | { tuple: Shape[] }
  | { object: Record<string, Shape>; required?: string[] };

const STRINGS: Shape = { list: 'string' };
const VARS: Shape = { map: 'string' };
const COUNTS: Shape = { map: 'number' };
const HTTP: Shape = {
  object: { path: 'string', status: 'number', contains: 'string', notContains: 'string', header: { tuple: ['string', 'string'] }, withCookies: 'boolean' },
  required: ['path', 'status'],
};

export const SCHEMA: Shape = {
  object: {
    description: 'string',
    needsComposerPhar: 'boolean',
    cases: {
      list: {
        object: {
          name: 'string',
          env: VARS,
          runEnv: VARS,
          operatorEnv: VARS,
          task: 'string',
          instance: 'string',
          serveWithoutServer: 'boolean',
          services: { list: { enum: ['redis', 'memcached'] } },
          needsPhpExtensions: STRINGS,
          needsServer: 'boolean',
          expect: {
            object: {
              build: { enum: ['pass', 'fail'] },
              stage: { enum: ['detect', 'build'] },
              log: STRINGS,
              notLog: STRINGS,
              count: COUNTS,
              errorId: 'string',
              files: { object: { present: STRINGS, absent: STRINGS, contains: VARS } },
              kept: STRINGS,
              server: { enum: ['static-web-server', 'caddy'] },
              command: 'string',
              launch: { object: { argv: STRINGS, env: VARS, server: VARS }, required: ['argv'] },
              task: { object: { exitCode: 'number', contains: STRINGS }, required: ['exitCode', 'contains'] },
              http: { list: HTTP },
              stopStatus: 'number',
              afterStop: { object: { present: STRINGS } },
              rebuild: { object: { log: STRINGS, notLog: STRINGS, count: COUNTS } },
            },
            required: ['build'],
          },
        },
        required: ['name', 'expect'],
      },
    },
  },
  required: ['description', 'cases'],
};

/** Every way `value` breaks `shape`, each as `<where>: <what>`. */
export function problems(value: unknown, shape: Shape = SCHEMA, where = '$'): string[] {
  const type = (v: unknown) => (Array.isArray(v) ? 'a list' : v === null ? 'null' : typeof v === 'object' ? 'an object' : `a ${typeof v}`);
  if (typeof shape === 'string') return typeof value === shape ? [] : [`${where}: is ${type(value)}, not a ${shape}`];
  if ('enum' in shape)
    return typeof value === 'string' && shape.enum.includes(value) ? [] : [`${where}: is ${JSON.stringify(value)}, not one of ${shape.enum.join(', ')}`];
  if ('list' in shape)
    return Array.isArray(value) ? value.flatMap((v, i) => problems(v, shape.list, `${where}[${i}]`)) : [`${where}: is ${type(value)}, not a list`];
  if ('tuple' in shape) {
    if (!Array.isArray(value) || value.length !== shape.tuple.length) return [`${where}: is not a list of ${shape.tuple.length}`];
    return value.flatMap((v, i) => problems(v, shape.tuple[i], `${where}[${i}]`));
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [`${where}: is ${type(value)}, not an object`];
  const entries = Object.entries(value as Record<string, unknown>);
  if ('map' in shape) return entries.flatMap(([k, v]) => problems(v, shape.map, `${where}.${k}`));
  const known = shape.object;
  return [
    ...entries.flatMap(([k, v]) =>
      k in known ? problems(v, known[k], `${where}.${k}`) : [`${where}.${k}: unknown key (known: ${Object.keys(known).join(', ')})`],
    ),
    ...(shape.required ?? []).filter((k) => !(k in value)).map((k) => `${where}.${k}: missing`),
  ];
}

/**
 * `entries` (every file and folder of a built app, relative, `/`-separated) as `kept` describes
 * them: what lies inside a listed folder none of whose content is listed is left out. Equal to
 * `kept`, sorted, when the app holds exactly what the fixture says.
 */
export function keptView(entries: string[], kept: string[]): string[] {
  const whole = kept.filter((k) => !kept.some((o) => o.startsWith(`${k}/`)));
  return entries.filter((e) => !whole.some((w) => e.startsWith(`${w}/`))).sort();
}

/** The fixtures that have a test.json, whose name starts with `prefix`. */
export function fixturesWithSpec(prefix = ''): string[] {
  return fs
    .readdirSync(FIXTURES)
    .filter((n) => n.startsWith(prefix) && fs.existsSync(path.join(FIXTURES, n, 'test.json')))
    .sort();
}

/** fixtures/<name>/test.json, checked against the schema: any problem throws, naming the file. */
export function readFixture(name: string): FixtureSpec {
  const file = path.join(FIXTURES, name, 'test.json');
  const value = JSON.parse(fs.readFileSync(file, 'utf8')) as unknown;
  const found = problems(value);
  if (found.length) throw new Error(`${path.relative(path.dirname(FIXTURES), file)} does not follow test/helpers/fixture-spec.ts:\n  ${found.join('\n  ')}`);
  return value as FixtureSpec;
}
