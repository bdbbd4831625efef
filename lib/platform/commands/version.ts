/** rbp's version: `rbp version`, `rbp --version`. */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Handler } from './context.ts';

declare const __RBP_VERSION__: string | undefined;

/** Set by the bundler from package.json; read from it when running from source. */
export function rbpVersion(): string {
  if (typeof __RBP_VERSION__ === 'string') return __RBP_VERSION__;
  const pkg = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../package.json');
  return (JSON.parse(fs.readFileSync(pkg, 'utf8')) as { version: string }).version;
}

export function versionLine(): string {
  return `rbp ${rbpVersion()} (node ${process.version}, ${process.platform}-${process.arch})`;
}

export const run: Handler = (ctx) => {
  ctx.streams.stdout.write(`${versionLine()}\n`);
  return Promise.resolve(0);
};
