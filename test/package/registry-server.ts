/**
 * A real OCI registry for the tests: Debian's `docker-registry` (Distribution 2.8) on a free loopback
 * port, with a configuration and a storage folder of the test's own, ended by its pid. Variants: one
 * that needs credentials (htpasswd, made with apache2-utils' htpasswd), one that refuses every push
 * (read-only), one whose storage fails.
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { finished } from '../../lib/child-result.ts';
import { freePort, have, tmpDir } from '../helpers/rbp.ts';

export interface Registry {
  /** `127.0.0.1:<port>` */
  host: string;
  dir: string;
  stop(): Promise<void>;
}

export const registryMissing = async (): Promise<string[]> => [
  ...((await have('docker-registry')) ? [] : ['docker-registry (apt-get install docker-registry)']),
  ...((await have('htpasswd')) ? [] : ['htpasswd (apt-get install apache2-utils)']),
];

export async function startRegistry(opts: { user?: { name: string; password: string }; readOnly?: boolean; brokenStorage?: boolean } = {}): Promise<Registry> {
  const dir = tmpDir('rbp-registry-');
  const port = await freePort();
  // A broken registry: its storage is a file, so every storage request fails (500).
  if (opts.brokenStorage) fs.writeFileSync(path.join(dir, 'data'), '');
  const lines = ['version: 0.1', 'log:', '  level: warn', 'storage:', '  filesystem:', `    rootdirectory: ${path.join(dir, 'data')}`];
  if (opts.readOnly) lines.push('  maintenance:', '    readonly:', '      enabled: true');
  lines.push('http:', `  addr: 127.0.0.1:${port}`);
  if (opts.user) {
    const htpasswd = path.join(dir, 'htpasswd');
    await execa('htpasswd', ['-Bbc', htpasswd, opts.user.name, opts.user.password]);
    lines.push('auth:', '  htpasswd:', '    realm: rbp-test', `    path: ${htpasswd}`);
  }
  const config = path.join(dir, 'config.yml');
  fs.writeFileSync(config, `${lines.join('\n')}\n`);
  const child = execa('docker-registry', ['serve', config], { reject: false, all: true, buffer: true });
  const host = `127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    const up = await fetch(`http://${host}/v2/`).then(
      (r) => r.status === 200 || r.status === 401,
      () => false,
    );
    if (up) break;
    if (i > 100 || child.exitCode !== null) {
      child.kill();
      throw new Error(`docker-registry did not start on ${host}:\n${finished(await child).all ?? ''}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    host,
    dir,
    stop: async () => {
      if (child.pid) process.kill(child.pid, 'SIGTERM');
      await child;
    },
  };
}

/** A DOCKER_CONFIG folder whose config.json logs in to `host`, as docker login writes it. */
export function dockerConfig(host: string, user: { name: string; password: string }): string {
  const dir = tmpDir('rbp-docker-config-');
  fs.writeFileSync(
    path.join(dir, 'config.json'),
    JSON.stringify({ auths: { [host]: { auth: Buffer.from(`${user.name}:${user.password}`).toString('base64') } } }),
  );
  return dir;
}
