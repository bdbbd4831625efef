import fs from 'node:fs';
import { ociArch } from '../cnb/descriptor.ts';
import type { EnvMap } from '../cnb/env.ts';

/** CNB_TARGET_* (Buildpack API >= 0.10) for this machine. */
export function targetEnv(): EnvMap {
  const env: EnvMap = { CNB_TARGET_OS: 'linux', CNB_TARGET_ARCH: ociArch() };
  try {
    const rel = fs.readFileSync('/etc/os-release', 'utf8');
    const get = (k: string) => new RegExp(`^${k}="?([^"\\n]*)"?`, 'm').exec(rel)?.[1];
    const id = get('ID');
    const version = get('VERSION_ID');
    if (id) env.CNB_TARGET_DISTRO_NAME = id;
    if (version) env.CNB_TARGET_DISTRO_VERSION = version;
  } catch {
    /* no os-release: leave the distro unset, as the lifecycle does */
  }
  return env;
}
