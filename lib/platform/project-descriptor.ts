/**
 * The CNB project descriptor, `project.toml`, read as pack reads it (schema 0.2, and the older 0.1):
 *
 *   [_] schema-version = "0.2"              [project] (0.1)
 *   [io.buildpacks] include / exclude        [build] include / exclude
 *   [[io.buildpacks.group]] id version uri   [[build.buildpacks]] id version uri
 *   [[io.buildpacks.build.env]] name value   [[build.env]] name value
 *
 * include and exclude are gitignore patterns relative to the app (only one of them may be given);
 * `uri` is a local buildpack directory (relative to project.toml, or file://). As with pack, flags
 * win: --env-file and --env over the descriptor's env, --buildpack/--type/--order over its group.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ignore from 'ignore';
import { parse as parseToml } from 'smol-toml';
import type { EnvMap } from '../cnb/env.ts';
import { UserError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { OrderFileEntry } from './order.ts';

export interface ProjectDescriptor {
  file: string;
  schema: '0.1' | '0.2';
  env: EnvMap;
  /** Order entries (`path` for a uri, `id`/`version` otherwise); empty when the descriptor names none. */
  group: OrderFileEntry[];
  /** Whether a path relative to the app (with `/` separators) goes into the build. */
  filter?: (rel: string, isDir: boolean) => boolean;
}

/** Entries as written in project.toml: their fields' types are checked below. */
interface BuildpackEntry {
  id?: unknown;
  version?: unknown;
  uri?: unknown;
}
interface EnvEntry {
  name?: unknown;
  value?: unknown;
}
interface Section {
  include?: string[];
  exclude?: string[];
  env?: EnvEntry[];
  group?: BuildpackEntry[];
}

const NAME_RE = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A value of project.toml as text: a string itself, any other value as JSON (a table is not `[object Object]`). */
function text(v: unknown): string {
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function invalid(file: string, what: string, value: string | undefined, rule: string, fix: string): UserError {
  return new UserError({
    id: 'platform/project-toml/invalid',
    title: 'Invalid project descriptor',
    seen: { what, ...(value !== undefined ? { value } : {}), where: file },
    rule,
    fix,
  });
}

/** `file` given with --descriptor must exist; the default APP/project.toml is optional. Logged on `log` when read. */
export function readProjectDescriptor(appDir: string, given?: string, log?: Logger): ProjectDescriptor | undefined {
  const file = path.resolve(given ?? path.join(path.resolve(appDir), 'project.toml'));
  if (!fs.existsSync(file)) {
    if (!given) return undefined;
    throw new UserError({
      id: 'platform/project-toml/not-found',
      title: 'Project descriptor not found',
      seen: { what: '--descriptor', value: given },
      rule: '--descriptor names a project.toml file.',
      fix: 'Check the path, or drop --descriptor to use APP/project.toml when there is one.',
    });
  }
  const { schema, sec } = sectionOf(file);
  const prefix = schema === '0.2' ? 'io.buildpacks' : 'build';
  const filter = filterOf(file, prefix, sec);
  const project = { file, schema, env: envOf(file, schema, sec), group: groupOf(file, prefix, sec), ...(filter ? { filter } : {}) };
  log?.debug(`project descriptor ${file} (schema ${schema}): ${Object.keys(project.env).length} variable(s), ${project.group.length} buildpack(s)`);
  return project;
}

/** The descriptor parsed, its schema, and the part of it rbp reads, wherever that schema puts it. */
function sectionOf(file: string): { schema: '0.1' | '0.2'; sec: Section } {
  let doc: Record<string, unknown>;
  try {
    doc = parseToml(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    // smol-toml's message quotes the offending line, which may hold a secret value: give its position only.
    const m = /line (\d+), column (\d+)/i.exec((e as Error).message);
    throw invalid(
      file,
      'project.toml',
      undefined,
      `project.toml is TOML; it does not parse${m ? ` at line ${m[1]}, column ${m[2]}` : ''}.`,
      'Fix the TOML syntax there.',
    );
  }
  const underscore = doc._ as { 'schema-version'?: unknown } | undefined;
  if (underscore?.['schema-version'] !== undefined && underscore['schema-version'] !== '0.2') {
    throw invalid(
      file,
      '[_] schema-version',
      text(underscore['schema-version']),
      'rbp reads project descriptors of schema 0.2 (with [_]) and 0.1 (without).',
      'Set schema-version = "0.2".',
    );
  }
  if (underscore?.['schema-version'] === '0.2') {
    const io = ((doc.io as Record<string, unknown> | undefined)?.buildpacks ?? {}) as Record<string, unknown>;
    return {
      schema: '0.2',
      sec: {
        include: io.include as string[],
        exclude: io.exclude as string[],
        env: (io.build as { env?: EnvEntry[] } | undefined)?.env,
        group: io.group as BuildpackEntry[],
      },
    };
  }
  const b = (doc.build ?? {}) as Record<string, unknown>;
  return {
    schema: '0.1',
    sec: { include: b.include as string[], exclude: b.exclude as string[], env: b.env as EnvEntry[], group: b.buildpacks as BuildpackEntry[] },
  };
}

function envOf(file: string, schema: '0.1' | '0.2', sec: Section): EnvMap {
  const envTable = schema === '0.2' ? '[[io.buildpacks.build.env]]' : '[[build.env]]';
  const env: EnvMap = {};
  for (const e of sec.env ?? []) {
    // The value is never echoed: it may be a secret.
    if (typeof e.name !== 'string' || !NAME_RE.test(e.name)) {
      throw invalid(
        file,
        `${envTable} name`,
        typeof e.name === 'string' ? e.name : undefined,
        'Each env entry has a name made of letters, digits and _ (not starting with a digit) and a string value.',
        'Write it like name = "CC_WEBROOT" and value = "/public".',
      );
    }
    if (typeof e.value !== 'string')
      throw invalid(file, `${envTable} ${e.name}`, undefined, 'Each env entry has a string value.', `Give ${e.name} a value = "..." (quoted).`);
    env[e.name] = e.value;
  }
  return env;
}

function groupOf(file: string, prefix: string, sec: Section): OrderFileEntry[] {
  const base = path.dirname(file);
  return (sec.group ?? []).map((b) => {
    if (b.uri !== undefined) {
      const uri = text(b.uri);
      let dir: string | undefined;
      if (uri.startsWith('file://')) dir = fileURLToPath(uri);
      else if (!/^[a-z][a-z0-9+.-]*:/i.test(uri)) dir = path.resolve(base, uri);
      if (!dir)
        throw invalid(
          file,
          `[[${prefix}.group]] uri`,
          uri,
          'rbp runs buildpacks from local directories: a uri is a path (relative to project.toml) or a file:// URL.',
          'Unpack the buildpack into a directory and point uri at it, or name one of ours by id (rbp/node, rbp/static, rbp/phpserver).',
        );
      return { path: dir };
    }
    if (typeof b.id !== 'string')
      throw invalid(
        file,
        `[[${prefix}.group]]`,
        JSON.stringify(b),
        'Each buildpack entry has an id (and optional version) or a uri.',
        'Add id = "rbp/node" or uri = "path/to/buildpack".',
      );
    return { id: b.id, ...(b.version ? { version: text(b.version) } : {}) };
  });
}

/** include or exclude as a filter of the app's paths (gitignore patterns, as pack reads them). */
function filterOf(file: string, prefix: string, sec: Section): ProjectDescriptor['filter'] {
  const inc = sec.include ?? [];
  const exc = sec.exclude ?? [];
  for (const what of ['include', 'exclude'] as const) {
    const list = sec[what] ?? [];
    if (!Array.isArray(list) || list.some((p) => typeof p !== 'string'))
      throw invalid(
        file,
        `${prefix}.${what}`,
        JSON.stringify(list),
        `${what} is a list of gitignore patterns.`,
        `Write it like ${what} = ["node_modules", "*.log"].`,
      );
  }
  if (inc.length && exc.length)
    throw invalid(
      file,
      `${prefix}.include and ${prefix}.exclude`,
      undefined,
      'A project descriptor may have include or exclude, not both (as pack).',
      'Keep one of them.',
    );
  if (inc.length) {
    const m = ignore().add(inc);
    // Folders are walked into (a pattern may match something inside them); files must match.
    return (rel, isDir) => isDir || m.ignores(rel);
  }
  if (exc.length) {
    const m = ignore().add(exc);
    return (rel, isDir) => !m.ignores(isDir ? `${rel}/` : rel);
  }
  return undefined;
}
