/**
 * podman for the image tests: containers run with runc and without podman's default ulimits (this
 * sandbox may not raise resource limits inside a container), on the host network; every container
 * and image a test made is removed by its id afterwards.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { finished } from '../../lib/child-result.ts';
import { tmpDir } from '../helpers/rbp.ts';

const conf = path.join(tmpDir('rbp-podman-'), 'containers.conf');
fs.writeFileSync(conf, '[containers]\ndefault_ulimits = []\n');
export const podmanEnv = { ...process.env, CONTAINERS_CONF: conf };

const containers: string[] = [];
const images = new Set<string>();

export function podman(args: string[], opts: { timeout?: number } = {}) {
  return execa('podman', ['--runtime', 'runc', ...args], { env: podmanEnv, reject: false, all: true, ...opts });
}

/** A fresh folder whose path is lower case (podman names an `oci:` image after its path). */
export function lowerTmp(prefix: string): string {
  const dir = path.join(os.tmpdir(), `${prefix}${crypto.randomBytes(6).toString('hex')}`);
  fs.mkdirSync(dir);
  return dir;
}

/**
 * Starts a container in the background; returns its id. --passwd=false: podman adds no /etc/passwd
 * line for the image's user, as Docker and Kubernetes add none.
 */
export async function runDetached(image: string, args: string[] = []): Promise<string> {
  const r = await podman(['run', '-d', '--passwd=false', '--network', 'host', ...args, image]);
  if (r.exitCode !== 0) throw new Error(`podman run ${image} failed:\n${r.all}`);
  const id = r.stdout.trim().split('\n').at(-1)!;
  containers.push(id);
  return id;
}

/** Waits for a 200 on the port and returns its body ('' when none came). */
export async function body200(port: number, tries = 150): Promise<string> {
  for (let i = 0; i < tries; i++) {
    const b = await fetch(`http://127.0.0.1:${port}/`).then(
      (x) => (x.status === 200 ? x.text() : ''),
      () => '',
    );
    if (b) return b;
    await new Promise((res) => setTimeout(res, 200));
  }
  return '';
}

/** Stops a container with SIGTERM (10 s grace) and returns its exit code. */
export async function stop(id: string): Promise<string> {
  await podman(['stop', '-t', '10', id]);
  return (await podman(['inspect', id, '--format', '{{.State.ExitCode}}'])).stdout.trim();
}

export async function logs(id: string): Promise<string> {
  return finished(await podman(['logs', id])).all ?? '';
}

/** Removes the containers started here and the images they ran. */
export async function cleanupPodman(): Promise<void> {
  for (const id of containers.splice(0)) {
    const image = await podman(['inspect', id, '--format', '{{.Image}}']);
    if (image.exitCode === 0) images.add(image.stdout.trim());
    await podman(['rm', '-f', id]);
  }
  for (const image of images) await podman(['rmi', '-f', image]);
  images.clear();
}

/** Notes an image to remove at cleanup (an image pulled into storage by `podman run --rm`). */
export function forgetImage(id: string): void {
  images.add(id);
}
