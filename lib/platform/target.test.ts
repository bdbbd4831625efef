import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildpackTargets, machineTarget, targetEnv, targetMatches, type MachineTarget } from './target.ts';

const here: MachineTarget = { os: 'linux', arch: 'amd64', distro: { name: 'ubuntu', version: '22.04' } };

describe('target matching (lifecycle TargetSatisfiedForBuild)', () => {
  it('no [[targets]]: any Linux machine', () => {
    expect(targetMatches(undefined, here)).toBe(true);
    expect(targetMatches([], { ...here, os: 'windows' })).toBe(false);
  });

  it('os and arch must be equal; an omitted field is a wildcard', () => {
    expect(targetMatches([{ os: 'linux', arch: 'amd64' }], here)).toBe(true);
    expect(targetMatches([{ os: 'linux' }], here)).toBe(true);
    expect(targetMatches([{ os: 'windows' }], here)).toBe(false);
    expect(targetMatches([{ os: 'linux', arch: 'arm64' }], here)).toBe(false);
    expect(targetMatches([{ os: 'linux', arch: 'arm64' }, { arch: 'amd64' }], here)).toBe(true);
  });

  it('variant: empty on either side matches; `arch-variant` is read too', () => {
    expect(targetMatches([{ arch: 'arm', variant: 'v7' }], { os: 'linux', arch: 'arm' })).toBe(true);
    expect(targetMatches([{ arch: 'arm', variant: 'v7' }], { os: 'linux', arch: 'arm', variant: 'v6' })).toBe(false);
    expect(targetMatches([{ arch: 'arm', 'arch-variant': 'v6' }], { os: 'linux', arch: 'arm', variant: 'v6' })).toBe(true);
  });

  it('distros: one must match when listed', () => {
    expect(
      targetMatches(
        [
          {
            os: 'linux',
            distros: [
              { name: 'debian', version: '12' },
              { name: 'ubuntu', version: '22.04' },
            ],
          },
        ],
        here,
      ),
    ).toBe(true);
    expect(targetMatches([{ os: 'linux', distros: [{ name: 'ubuntu', version: '24.04' }] }], here)).toBe(false);
    expect(targetMatches([{ os: 'linux', distros: [{ name: 'ubuntu' }] }], here)).toBe(true);
    expect(targetMatches([{ os: 'linux', distros: [{ name: 'alpine' }] }], { os: 'linux', arch: 'amd64' })).toBe(true);
  });
});

describe('this machine', () => {
  it('reads the distro from os-release, quoted or not', () => {
    const f = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'target-')), 'os-release');
    fs.writeFileSync(f, 'NAME="Debian GNU/Linux"\nID=debian\nVERSION_ID="12"\n');
    const t = machineTarget(f);
    expect(t.distro).toEqual({ name: 'debian', version: '12' });
    expect(targetEnv(t)).toMatchObject({ CNB_TARGET_OS: 'linux', CNB_TARGET_DISTRO_NAME: 'debian', CNB_TARGET_DISTRO_VERSION: '12' });
    expect(targetEnv(t).CNB_TARGET_ARCH).toMatch(/^(amd64|arm64|arm|386|\w+)$/);
  });

  it('leaves the distro unset without os-release, and CNB_TARGET_DISTRO_* out of the env', () => {
    const t = machineTarget('/nonexistent/os-release');
    expect(t.distro).toBeUndefined();
    expect(Object.keys(targetEnv(t)).sort()).toEqual(['CNB_TARGET_ARCH', 'CNB_TARGET_OS']);
  });

  it('takes targets from deprecated [[stacks]] as the lifecycle does', () => {
    const bionic = { os: 'linux', arch: 'amd64', distros: [{ name: 'ubuntu', version: '18.04' }] };
    expect(buildpackTargets({ api: '0.8', stacks: [{ id: 'io.buildpacks.stacks.bionic' }] })).toEqual([bionic]);
    // Before 0.10, bionic among other stacks implies nothing (the others are unknown ids here).
    expect(buildpackTargets({ api: '0.8', stacks: [{ id: 'io.buildpacks.stacks.bionic' }, { id: 'heroku-22' }] })).toBeUndefined();
    expect(buildpackTargets({ api: '0.10', stacks: [{ id: 'io.buildpacks.stacks.bionic' }, { id: 'heroku-22' }] })).toEqual([bionic]);
    expect(buildpackTargets({ api: '0.7', stacks: [{ id: '*' }] })).toEqual([{}]);
    expect(buildpackTargets({ api: '0.10', targets: [{ os: 'linux' }], stacks: [{ id: 'io.buildpacks.stacks.bionic' }] })).toEqual([{ os: 'linux' }]);
    expect(
      targetMatches(buildpackTargets({ api: '0.8', stacks: [{ id: 'io.buildpacks.stacks.bionic' }] }), {
        os: 'linux',
        arch: 'amd64',
        distro: { name: 'debian', version: '12' },
      }),
    ).toBe(false);
  });
});
