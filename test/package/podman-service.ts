/**
 * podman's Docker-compatible API for pack, as a podman user gives it one: `podman system service` on a
 * unix socket of the test's own (DOCKER_HOST=unix://…), started by the test and ended by its pid.
 * The registries the test starts on loopback ports are plain HTTP: the service's registries.conf says
 * so (Docker trusts 127.0.0.0/8 that way by default).
 */
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import { finished } from '../../lib/child-result.ts';
import { tmpDir } from '../helpers/rbp.ts';
import { podmanEnv } from './podman.ts';

export interface PodmanService {
  /** `unix:///…/podman.sock` */
  dockerHost: string;
  /** The environment pack runs with: DOCKER_HOST and the podman settings. */
  env: Record<string, string>;
  stop(): Promise<void>;
}

export async function startPodmanService(insecureRegistries: string[]): Promise<PodmanService> {
  const dir = tmpDir('rbp-podman-api-');
  const sock = path.join(dir, 'podman.sock');
  const registries = path.join(dir, 'registries.conf');
  fs.writeFileSync(
    registries,
    ['unqualified-search-registries = []', ...insecureRegistries.map((r) => `[[registry]]\nlocation = "${r}"\ninsecure = true`)].join('\n') + '\n',
  );
  const env = { ...podmanEnv, CONTAINERS_REGISTRIES_CONF: registries } as Record<string, string>;
  // --time=0: no idle timeout (pack's long builds); ended below by its pid.
  const child = execa('podman', ['--runtime', 'runc', 'system', 'service', '--time=0', `unix://${sock}`], {
    env,
    reject: false,
    all: true,
    buffer: true,
  });
  for (let i = 0; !fs.existsSync(sock); i++) {
    if (i > 150 || child.exitCode !== null) {
      child.kill();
      throw new Error(`podman system service did not start:\n${finished(await child).all ?? ''}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const dockerHost = `unix://${sock}`;
  return {
    dockerHost,
    // pack's own settings in a folder of the test's own; a fixed volume key names its cache volumes
    // (else it stores a random key per image in ~/.pack and warns).
    env: { ...env, DOCKER_HOST: dockerHost, PACK_HOME: path.join(dir, 'pack-home'), PACK_VOLUME_KEY: 'rbp-test' },
    stop: async () => {
      if (child.pid) process.kill(child.pid, 'SIGTERM');
      await child;
    },
  };
}

/** `podman --remote` through the same socket: what pack sees. */
export function remotePodman(svc: PodmanService, args: string[]) {
  return execa('podman', ['--url', svc.dockerHost, ...args], { env: svc.env, reject: false, all: true });
}
