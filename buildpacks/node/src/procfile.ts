/**
 * A `Procfile` at the application root, read as Heroku's buildpacks read it (heroku/buildpacks-procfile):
 * one `type: command` per line; blank lines and `#` comments are skipped; a type is lowercase
 * letters and digits with inner `-`, at most 63 characters; a type written with capitals, `_` or
 * leading spaces is corrected (`Web` → `web`, `my_worker` → `my-worker`) with a warning; a line
 * that is neither, or a type with no command, is an error naming the line; a type given twice
 * keeps its last command, with a warning.
 *
 * The node buildpack starts the app with the Procfile's `web` when neither CC_RUN_COMMAND nor
 * scripts.start is set (package-json.ts, startMethod); its other types become processes of their
 * own (`rbp run OUT --process worker`), run with /bin/sh -c as Heroku runs them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { UserError } from '../../../lib/errors.ts';

export const PROCFILE = 'Procfile';

export interface Procfile {
  /** Types in file order, each with its command. */
  processes: Map<string, string>;
  warnings: string[];
}

const KEY = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

function invalid(file: string, line: number, rule: string, fix: string): UserError {
  return new UserError({
    id: 'node/procfile/invalid',
    title: 'Procfile line is not `type: command`',
    seen: { what: 'Procfile', where: `${file}:${line}` },
    rule,
    fix,
  });
}

/** The Procfile's text, parsed; `file` is named in errors and warnings. */
export function parseProcfile(text: string, file = PROCFILE): Procfile {
  const processes = new Map<string, string>();
  const warnings: string[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((raw, i) => {
    if (!raw.trim() || /^\s*#/.test(raw)) return;
    const colon = raw.indexOf(':');
    const rule =
      'Each line of a Procfile is `type: command`: the type in lowercase letters, digits and inner -, at most 63 characters (web, worker, release-tasks), then the command.';
    if (colon < 0) throw invalid(file, i + 1, rule, 'Write the line as `web: node server.js`, or start it with # to make it a comment.');
    const written = raw.slice(0, colon);
    const command = raw.slice(colon + 1).trim();
    const type = KEY.test(written) ? written : written.trimStart().replace(/_/g, '-').toLowerCase();
    if (!KEY.test(type)) throw invalid(file, i + 1, rule, 'Name the process with lowercase letters, digits and -, e.g. `web:` or `worker:`.');
    if (!command) throw invalid(file, i + 1, rule, `Give process ${type} a command after the colon, e.g. \`${type}: node server.js\`.`);
    if (type !== written)
      warnings.push(`Procfile key ${JSON.stringify(written)} has been corrected to ${JSON.stringify(type)} (${file}:${i + 1}): please update your Procfile`);
    if (processes.has(type)) {
      warnings.push(`Procfile: process ${type} is defined twice; the last one (${file}:${i + 1}) is used`);
      processes.delete(type);
    }
    processes.set(type, command);
  });
  if (!processes.size) warnings.push(`Procfile: no process is defined in ${file}`);
  return { processes, warnings };
}

/** The app's Procfile, or undefined when it has none. */
export function readProcfile(appDir: string): Procfile | undefined {
  const file = path.join(appDir, PROCFILE);
  let text: string;
  try {
    if (!fs.statSync(file).isFile()) return undefined;
    text = fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  return parseProcfile(text, file);
}
