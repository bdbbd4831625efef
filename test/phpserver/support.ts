/**
 * Shared set-up of the phpserver integration tests. The application server cannot be fetched on this
 * machine, so builds install it from a local mirror (RBP_DEPENDENCY_MIRROR) holding a fixture
 * artifact and its `.sha256`: it exercises the download and checksum code and is never run. PHP and
 * Composer are the real Debian ones (RBP_TOOL_PHP, RBP_TOOL_COMPOSER), as in CI.
 * A real server binary, when one is provided as RBP_TOOL_FRANKENPHP, is used by serve.test.ts.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { ociArch } from '../../lib/cnb/descriptor.ts';
import { envArgs, tmpDir } from '../helpers/rbp.ts';

export const SERVER_VERSIONS = ['1.9.1', '1.12.3'];

/** The upstream asset name buildpack.toml uses on this machine's arch. */
export function serverAsset(): string {
  return ociArch() === 'arm64' ? 'frankenphp-linux-aarch64' : 'frankenphp-linux-x86_64';
}

/** Bytes that are not a program: executing them fails (ENOEXEC), so nothing can pass for a server. */
export function fixtureArtifact(version: string): Buffer {
  return Buffer.from(`rbp test fixture standing for the frankenphp ${version} release asset; not a program\n`);
}

/** A mirror directory laid out as <id>/<version>/<file> with <file>.sha256 beside each file. */
export function makeMirror(versions: string[] = SERVER_VERSIONS): string {
  const dir = tmpDir('rbp-php-mirror-');
  for (const v of versions) {
    const d = path.join(dir, 'frankenphp', v);
    fs.mkdirSync(d, { recursive: true });
    const data = fixtureArtifact(v);
    fs.writeFileSync(path.join(d, serverAsset()), data);
    fs.writeFileSync(path.join(d, `${serverAsset()}.sha256`), `${crypto.createHash('sha256').update(data).digest('hex')}  ${serverAsset()}\n`);
  }
  return dir;
}

export const PHP = process.env.RBP_TEST_PHP ?? '/usr/bin/php';
export const COMPOSER = process.env.RBP_TEST_COMPOSER ?? '/usr/bin/composer';

export function haveFile(f: string): boolean {
  return fs.existsSync(f);
}

/** The operator environment for `rbp build`: the mirror, Debian's PHP and Composer. */
export function operatorEnv(mirror: string, extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', RBP_DEPENDENCY_MIRROR: mirror, RBP_TOOL_PHP: PHP, RBP_TOOL_COMPOSER: COMPOSER, ...extra };
}

export { envArgs };
