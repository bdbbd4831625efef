import fs from 'node:fs';
import { apiAtLeast } from '../cnb/api.ts';
import { ociArch, type BuildpackDescriptor, type Target } from '../cnb/descriptor.ts';
import type { EnvMap } from '../cnb/env.ts';

/** This machine as a CNB target: os, OCI arch, and the distro of /etc/os-release when there is one. */
export interface MachineTarget {
  os: string;
  arch: string;
  variant?: string;
  distro?: { name?: string; version?: string };
}

let thisMachine: MachineTarget | undefined;

/** This machine's target; /etc/os-release is read once per process. */
export function machineTarget(osRelease = '/etc/os-release'): MachineTarget {
  if (osRelease === '/etc/os-release') return (thisMachine ??= readTarget(osRelease));
  return readTarget(osRelease);
}

function readTarget(osRelease: string): MachineTarget {
  const t: MachineTarget = { os: 'linux', arch: ociArch() };
  try {
    const rel = fs.readFileSync(osRelease, 'utf8');
    const get = (k: string) => new RegExp(`^${k}="?([^"\\n]*)"?`, 'm').exec(rel)?.[1];
    const name = get('ID');
    const version = get('VERSION_ID');
    if (name || version) t.distro = { ...(name ? { name } : {}), ...(version ? { version } : {}) };
  } catch {
    /* no os-release: leave the distro unset, as the lifecycle does */
  }
  return t;
}

/** CNB_TARGET_* (Buildpack API >= 0.10) for this machine. */
export function targetEnv(t: MachineTarget = machineTarget()): EnvMap {
  const env: EnvMap = { CNB_TARGET_OS: t.os, CNB_TARGET_ARCH: t.arch };
  if (t.variant) env.CNB_TARGET_ARCH_VARIANT = t.variant;
  if (t.distro?.name) env.CNB_TARGET_DISTRO_NAME = t.distro.name;
  if (t.distro?.version) env.CNB_TARGET_DISTRO_VERSION = t.distro.version;
  return env;
}

/**
 * A buildpack's targets as the lifecycle reads them (buildpack/bp_descriptor.go): its [[targets]];
 * without any, those its deprecated [[stacks]] imply: `*` is any target, and
 * `io.buildpacks.stacks.bionic` is linux/amd64 Ubuntu 18.04 (for Buildpack API 0.10 and later, or
 * when it is the only stack listed); other stack ids imply nothing.
 */
export function buildpackTargets(d: Pick<BuildpackDescriptor, 'api' | 'targets' | 'stacks'>): Target[] | undefined {
  if (d.targets?.length) return d.targets;
  const out: Target[] = [];
  for (const s of d.stacks ?? []) {
    if (s.id === 'io.buildpacks.stacks.bionic') {
      if (apiAtLeast(d.api, '0.10') || d.stacks!.length === 1) out.push({ os: 'linux', arch: 'amd64', distros: [{ name: 'ubuntu', version: '18.04' }] });
    } else if (s.id === '*') out.push({});
  }
  return out.length ? out : undefined;
}

/** Empty on either side is a wildcard (lifecycle platform/target_data.go `matches`). */
const matches = (a: string | undefined, b: string | undefined) => !a || !b || a === b;

/**
 * Whether a buildpack's [[targets]] allow this machine (lifecycle `TargetSatisfiedForBuild`): os,
 * arch and variant match, and one of the target's distros matches when it lists any. A buildpack
 * without [[targets]] is a Linux buildpack for any arch (the lifecycle infers that from bin/build).
 */
export function targetMatches(targets: Target[] | undefined, here: MachineTarget = machineTarget()): boolean {
  if (!targets?.length) return here.os === 'linux';
  return targets.some((t) => {
    const variant = t.variant ?? (t as { 'arch-variant'?: string })['arch-variant'];
    if (!matches(here.os, t.os) || !matches(here.arch, t.arch) || !matches(here.variant, variant)) return false;
    if (!here.distro || !t.distros?.length) return true;
    return t.distros.some((d) => matches(here.distro!.name, d.name) && matches(here.distro!.version, d.version));
  });
}
