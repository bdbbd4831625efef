/**
 * Warnings at build for an app that would not start (issue 12 item 8). The contract never runs
 * scripts.build: an app whose start command needs its output builds fine, then fails on every start.
 * The build looks at the start command once the dependencies are in place and names what is missing
 * and how to get it built. Warnings only: the check reads commands, it cannot prove them wrong.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Manager } from '../../../lib/js-project/lock-files.ts';
import { MANAGERS, PACKAGE_MANAGERS } from '../../../lib/js-project/package-managers.ts';
import { START_SOURCE, type PackageJson, type StartMethod } from './package-json.ts';

const BUILD_FIX =
  'build it during deployment: a "postinstall" script running your build (e.g. "postinstall": "npm run build"), or CC_NODE_BUILD_TOOL=custom with CC_CUSTOM_BUILD_TOOL="npm install && npm run build"';

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
  const first =
    command
      .split(/&&|\|\||;/)
      .map((c) => c.trim())
      .pop() ?? '';
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
  const p = pkg as { dependencies?: Record<string, string>; devDependencies?: Record<string, string> };
  return Boolean(p.dependencies?.[dep] ?? p.devDependencies?.[dep]);
}

export function startWarnings(appDir: string, pkg: PackageJson, start: StartMethod | undefined, manager: Manager): string[] {
  if (!start) return [];
  const warnings: string[] = [];
  const exists = (f: string) => fs.existsSync(path.join(appDir, f));
  const what = START_SOURCE[start.kind];
  if (start.kind === 'main') {
    if (!exists(start.file)) warnings.push(`main is ${start.file}, which does not exist after the build: nothing runs scripts.build; ${BUILD_FIX}`);
    return warnings;
  }
  const command = start.command;
  const file = scriptFile(command);
  if (file && !exists(file))
    warnings.push(`${what} runs ${file}, which does not exist after the build (\`${command}\`): nothing runs scripts.build; ${BUILD_FIX}`);
  if (/(^|[\s;&|])next\s+start\b/.test(command) && !exists('.next'))
    warnings.push(`${what} runs \`next start\` but there is no .next/ folder: nothing runs \`next build\`; ${BUILD_FIX}`);
  if (has(pkg, 'vite') && !exists('dist')) {
    if (/(^|[\s;&|])vite(\s|$)(?!.*\bbuild\b)/.test(command) || /(^|[\s;&|])vite\s+preview\b/.test(command)) {
      warnings.push(
        `${what} runs Vite (\`${command}\`) without a built dist/: it would serve the unbuilt index.html and sources; ${BUILD_FIX}, and serve dist/`,
      );
    }
  }
  // A runtime that is a package manager too (Bun) is installed only when it is the one that installs.
  for (const m of MANAGERS) {
    const rt = PACKAGE_MANAGERS[m].runtime;
    if (!rt || m === manager) continue;
    const calls = rt.commands.some((c) => new RegExp(`(^|[\\s;&|])${c}\\s`).test(`${command} `));
    if (calls) {
      const entry = PACKAGE_MANAGERS[m];
      warnings.push(
        `${what} calls ${rt.name} (\`${command}\`) but this app is installed with ${manager}: ${rt.label} is installed only when it is the package manager; add a ${entry.lockFiles[0]} or set CC_NODE_BUILD_TOOL=${entry.buildTools[0]!.name}`,
      );
    }
  }
  return warnings;
}
