/**
 * What the app's commands need, read at build. The contract never runs scripts.build: an app whose
 * start command needs its output builds fine, then fails on every start, so the build looks at the
 * start command once the dependencies are in place and names what is missing and how to get it
 * built, with the app's own package manager. Warnings only: the check reads commands, it cannot
 * prove them wrong. And a runtime of the table (Bun) that the app's commands call while another
 * manager installs it is installed beside that manager, as Railpack does.
 */
import fs from 'node:fs';
import path from 'node:path';
import { lockFileOf, type Manager } from '../../../lib/js-project/lock-files.ts';
import { buildCommandExample, MANAGERS, PACKAGE_MANAGERS, type AppRuntime } from '../../../lib/js-project/package-managers.ts';
import { START_SOURCE, type PackageJson, type StartMethod } from './package-json.ts';
import { readProcfile } from './procfile.ts';

/** How to get the app built at deployment, with its own package manager. */
function buildFix(appDir: string, manager: Manager): string {
  const entry = PACKAGE_MANAGERS[manager].run ? PACKAGE_MANAGERS[manager] : PACKAGE_MANAGERS.npm;
  const custom = buildCommandExample(manager, lockFileOf(appDir, manager) !== undefined);
  return `build it during deployment: a "postinstall" script running your build (e.g. "postinstall": "${[...entry.run!, 'build'].join(' ')}"), or CC_NODE_BUILD_TOOL=custom with CC_CUSTOM_BUILD_TOOL="${custom}"`;
}

/** The runtimes a start command may name: Node.js (nodemon restarts it) and the managers that are runtimes too (Bun). */
const RUNTIMES = new Map<string, string[]>([
  ['node', []],
  ['nodemon', []],
  ...MANAGERS.flatMap((m) => {
    const r = PACKAGE_MANAGERS[m].runtime;
    return r ? [[r.name, r.scriptWords] as [string, string[]]] : [];
  }),
]);

/** The file a `node`/`bun`/`deno run` command runs, its flags skipped. */
export function scriptFile(command: string): string | undefined {
  const first = command
    .split(/&&|\|\||;/)
    .pop()!
    .trim();
  const words = first.split(/\s+/).filter(Boolean);
  while (words.length && /^[A-Z_][A-Z0-9_]*=/.test(words[0]!)) words.shift();
  if (words[0] === 'exec') words.shift();
  const runtime = words.shift();
  const scriptWords = runtime === undefined ? undefined : RUNTIMES.get(runtime);
  if (!scriptWords) return undefined;
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (w === '-r' || w === '--require' || w === '--import' || w === '--loader' || w === '--env-file') {
      i++;
      continue;
    }
    if (w.startsWith('-')) continue;
    if (scriptWords.includes(w)) return undefined;
    return /\.[cm]?[jt]sx?$/.test(w) || w.includes('/') ? w : undefined;
  }
  return undefined;
}

function has(pkg: PackageJson, dep: string): boolean {
  return Boolean(pkg.dependencies?.[dep] ?? pkg.devDependencies?.[dep]);
}

/** `manager`: the one of the app's own commands (lib/js-project/build-tool.ts appManager). */
export function startWarnings(appDir: string, pkg: PackageJson, start: StartMethod | undefined, manager: Manager): string[] {
  if (!start) return [];
  const warnings: string[] = [];
  const fix = buildFix(appDir, manager);
  const exists = (f: string) => fs.existsSync(path.join(appDir, f));
  const what = START_SOURCE[start.kind];
  if (start.kind === 'main') {
    if (!exists(start.file)) warnings.push(`main is ${start.file}, which does not exist after the build: nothing runs scripts.build; ${fix}`);
    return warnings;
  }
  const command = start.command;
  const file = scriptFile(command);
  if (file && !exists(file)) warnings.push(`${what} runs ${file}, which does not exist after the build (\`${command}\`): nothing runs scripts.build; ${fix}`);
  if (/(^|[\s;&|])next\s+start\b/.test(command) && !exists('.next'))
    warnings.push(`${what} runs \`next start\` but there is no .next/ folder: nothing runs \`next build\`; ${fix}`);
  const vite = /(^|[\s;&|])vite(\s|$)(?!.*\bbuild\b)/.test(command) || /(^|[\s;&|])vite\s+preview\b/.test(command);
  if (vite && has(pkg, 'vite') && !exists('dist'))
    warnings.push(`${what} runs Vite (\`${command}\`) without a built dist/: it would serve the unbuilt index.html and sources; ${fix}, and serve dist/`);
  return warnings;
}

/** The commands a shell line runs first in each of its parts, past variable assignments and wrappers (`exec`, `env`, `cross-env`). */
function commandsOf(line: string): string[] {
  const wrappers = new Set(['exec', 'env', 'cross-env', 'time', 'nohup']);
  return line.split(/&&|\|\||[;|&()`]|\$\(/).flatMap((part) => {
    const words = part.trim().split(/\s+/).filter(Boolean);
    while (words.length && (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]!) || wrappers.has(words[0]!))) words.shift();
    return words.length ? [words[0]!] : [];
  });
}

/** A runtime of the table that the app's commands call, installed by another manager; and the first command that calls it. */
export interface RuntimeCall {
  manager: Manager;
  runtime: AppRuntime;
  /** Where the command is: `scripts.start`, `CC_RUN_COMMAND`, `Procfile worker`… */
  where: string;
  command: string;
}

/**
 * The runtimes of the table (Bun) that the start command, a package.json script or a Procfile
 * process calls while `manager` (the app's) is another: each needs its program at build and launch.
 */
export function runtimesCalled(appDir: string, pkg: PackageJson, start: StartMethod | undefined, manager: Manager): RuntimeCall[] {
  const lines: { where: string; command: string }[] = [];
  if (start && start.kind !== 'main') lines.push({ where: START_SOURCE[start.kind], command: start.command });
  for (const [name, command] of Object.entries(pkg.scripts ?? {})) if (typeof command === 'string') lines.push({ where: `scripts.${name}`, command });
  let procfile;
  try {
    procfile = start?.kind === 'procfile' ? start.procfile : readProcfile(appDir);
  } catch {
    procfile = undefined; // an invalid Procfile that nothing uses; one that is used fails where it is read
  }
  for (const [type, command] of procfile?.processes ?? []) lines.push({ where: `Procfile ${type}`, command });
  const calls: RuntimeCall[] = [];
  for (const m of MANAGERS) {
    const runtime = PACKAGE_MANAGERS[m].runtime;
    if (!runtime || m === manager) continue;
    const line = lines.find((l) => commandsOf(l.command).some((c) => runtime.commands.includes(c)));
    if (line) calls.push({ manager: m, runtime, ...line });
  }
  return calls;
}
