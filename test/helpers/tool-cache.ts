/**
 * The tools the tests run for real, as `scripts/tools/env.sh` exports them: one variable per tool,
 * naming an executable the tool scripts installed at the contract's version. In CI (`CI` set) a
 * missing tool fails the tests that need it; on a laptop they are skipped, and the reason is printed.
 */
import fs from 'node:fs';
import { IN_CI, requirement } from './requirement.ts';

export { IN_CI };

export interface ToolVariable {
  variable: string;
  /** What the tool is, for messages. */
  name: string;
  /** The contract's version (a minor for Hugo: the newest patch release of it). */
  version: string;
  /** The arguments that make it print its version. */
  versionArgs: string[];
  /** The script that installs it. */
  script: string;
}

/** Every tool `scripts/tools/env.sh` exports, with the version the contract names. */
export const TOOL_VARIABLES: readonly ToolVariable[] = [
  { variable: 'RBP_TOOL_CADDY', name: 'Caddy', version: '2.11.2', versionArgs: ['version'], script: 'caddy.sh 2.11.2' },
  { variable: 'RBP_TEST_CADDY_2_10_2', name: 'Caddy (inside the PHP server)', version: '2.10.2', versionArgs: ['version'], script: 'caddy.sh 2.10.2' },
  { variable: 'RBP_TOOL_STATIC_WEB_SERVER', name: 'Static Web Server', version: '2.42.0', versionArgs: ['--version'], script: 'static-web-server.sh' },
  { variable: 'RBP_TOOL_MDBOOK', name: 'mdBook', version: '0.4.52', versionArgs: ['--version'], script: 'mdbook.sh' },
  { variable: 'RBP_TOOL_HUGO', name: 'Hugo (extended)', version: '0.149', versionArgs: ['version'], script: 'hugo.sh 0.149' },
  { variable: 'RBP_TEST_HUGO_0_160', name: 'Hugo (extended)', version: '0.160', versionArgs: ['version'], script: 'hugo.sh 0.160' },
  { variable: 'RBP_TOOL_MKDOCS', name: 'MkDocs', version: '1.6.1', versionArgs: ['--version'], script: 'mkdocs.sh' },
  {
    variable: 'RBP_TOOL_FRANKENPHP',
    name: 'FrankenPHP on PHP 8.4 (1.11.1: the Go module proxy serves no Caddy module of 1.9.1; see scripts/tools/frankenphp.sh)',
    version: '1.11.1',
    versionArgs: ['version'],
    script: 'frankenphp.sh',
  },
  { variable: 'RBP_TOOL_COMPOSER', name: 'Composer (Debian trixie)', version: '2.8.8', versionArgs: ['--version'], script: 'composer.sh' },
  { variable: 'RBP_TOOL_LIFECYCLE', name: 'the CNB lifecycle', version: '0.20.8', versionArgs: ['-version'], script: 'lifecycle.sh' },
  { variable: 'RBP_TEST_PACK', name: 'pack', version: '0.40.6', versionArgs: ['--version'], script: 'pack.sh' },
];

export interface RealTool {
  variable: string;
  /** Skip the tests that need it: only outside CI, when the variable is not set. */
  skip: boolean;
  /** The executable; throws (failing the test) when it is missing. */
  path(): string;
}

function describeMissing(variable: string): string {
  const t = TOOL_VARIABLES.find((v) => v.variable === variable);
  const how = t ? `scripts/tools/${t.script} installs ${t.name} ${t.version}` : 'it names a real binary';
  return `${how}; eval "$(scripts/tools/env.sh)" sets every tool variable`;
}

/**
 * A tool from its variable. `who` names the tests, for the printed reason when they are skipped.
 * A variable that is set but names no executable is always an error: the operator meant a tool.
 */
export function realTool(variable: string, who: string): RealTool {
  const value = process.env[variable]?.trim();
  if (value) {
    let ok: boolean;
    try {
      fs.accessSync(value, fs.constants.X_OK);
      ok = fs.statSync(value).isFile();
    } catch {
      ok = false;
    }
    if (!ok) throw new Error(`${variable}=${value} is not an executable file`);
    return { variable, skip: false, path: () => value };
  }
  const missing = requirement<string>(undefined, { what: variable, how: describeMissing(variable), who });
  return { variable, skip: missing.skip, path: () => missing.value() };
}
