/**
 * Warnings at build for an app that would not start (issue 12 item 8). The contract never runs
 * scripts.build: an app whose start command needs its output builds fine, then fails on every start.
 * The build looks at the start command once the dependencies are in place and names what is missing
 * and how to get it built. Warnings only: the check reads commands, it cannot prove them wrong.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Manager } from '../../../lib/js-project/lock-files.ts';
import type { PackageJson, StartMethod } from './package-json.ts';

const BUILD_FIX =
  'build it during deployment: a "postinstall" script running your build (e.g. "postinstall": "npm run build"), or CC_NODE_BUILD_TOOL=custom with CC_CUSTOM_BUILD_TOOL="npm install && npm run build"';

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
  if (runtime !== 'node' && runtime !== 'bun' && runtime !== 'nodemon') return undefined;
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (w === '-r' || w === '--require' || w === '--import' || w === '--loader' || w === '--env-file') {
      i++;
      continue;
    }
    if (w.startsWith('-')) continue;
    if (runtime === 'bun' && (w === 'run' || w === 'start')) return undefined;
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
  const what =
    start.kind === 'run-command'
      ? 'CC_RUN_COMMAND'
      : start.kind === 'start-script'
        ? 'scripts.start'
        : start.kind === 'procfile'
          ? "the Procfile's web"
          : 'main';
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
  if (/(^|[\s;&|])bun(x)?\s/.test(`${command} `) && manager !== 'bun') {
    warnings.push(
      `${what} calls bun (\`${command}\`) but this app is installed with ${manager}: Bun is installed only when it is the package manager; add a bun.lock or set CC_NODE_BUILD_TOOL=bun`,
    );
  }
  return warnings;
}
