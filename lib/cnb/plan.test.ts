import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readBuildPlan, readBuildpackPlan, readUnmet, validateBuildPlan, writeBuildPlan, writeBuildpackPlan, type BuildPlan } from './plan.ts';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'cnb-plan-'));

describe('build plan (detect output)', () => {
  it('round-trips provides, requires with metadata and [[or]] alternatives in TOML', () => {
    const file = path.join(tmp(), 'plan.toml');
    const plan: BuildPlan = {
      provides: [{ name: 'node' }],
      requires: [{ name: 'node', metadata: { version: '20.x', launch: true } }],
      or: [{ provides: [{ name: 'bun' }], requires: [{ name: 'bun' }] }],
    };
    writeBuildPlan(file, plan);
    const text = fs.readFileSync(file, 'utf8');
    expect(text).toMatch(/\[\[provides\]\]\nname = "node"/);
    expect(text).toMatch(/\[requires\.metadata\]\nversion = "20\.x"/);
    expect(text).toMatch(/\[\[or\.provides\]\]\nname = "bun"/);
    expect(readBuildPlan(file)).toEqual(plan);
  });

  it('reads an empty file (what the lifecycle pre-creates) as an empty plan', () => {
    const file = path.join(tmp(), 'plan.toml');
    fs.writeFileSync(file, '');
    expect(readBuildPlan(file)).toEqual({});
  });

  it('rejects a top-level version in requires, also inside [[or]]', () => {
    expect(() => validateBuildPlan({ requires: [{ name: 'node', version: '20' } as never] })).toThrow(
      'top-level "version" in [[requires]] node is not allowed; put it in [requires.metadata]',
    );
    expect(() => validateBuildPlan({ or: [{ requires: [{ name: 'node', version: '20' } as never] }] })).toThrow('[[or]] #0');
    const file = path.join(tmp(), 'plan.toml');
    fs.writeFileSync(file, '[[requires]]\nname = "node"\nversion = "20"\n');
    expect(() => readBuildPlan(file)).toThrow('top-level "version"');
    expect(() => writeBuildPlan(path.join(tmp(), 'p.toml'), { requires: [{ name: 'x', version: '1' } as never] })).toThrow('top-level "version"');
  });

  it('rejects requires and provides without a name', () => {
    expect(() => validateBuildPlan({ requires: [{} as never] })).toThrow('a [[requires]] has no name');
    expect(() => validateBuildPlan({ provides: [{ name: '' }] })).toThrow('a [[provides]] has no name');
  });
});

describe('buildpack plan (build input)', () => {
  it('writes and reads [[entries]] with metadata, duplicates kept', () => {
    const file = path.join(tmp(), 'plan.toml');
    const plan = { entries: [{ name: 'node', metadata: { version: '20.x' } }, { name: 'node' }] };
    writeBuildpackPlan(file, plan);
    expect(fs.readFileSync(file, 'utf8')).toContain('[[entries]]\nname = "node"\n\n[entries.metadata]\nversion = "20.x"');
    expect(readBuildpackPlan(file)).toEqual(plan);
  });

  it('reads a missing or empty plan as no entries', () => {
    expect(readBuildpackPlan(path.join(tmp(), 'none.toml'))).toEqual({ entries: [] });
  });
});

describe('build.toml [[unmet]]', () => {
  it('reads unmet names', () => {
    const file = path.join(tmp(), 'build.toml');
    fs.writeFileSync(file, '[[unmet]]\nname = "node"\n\n[[unmet]]\nname = "yarn"\n');
    expect(readUnmet(file)).toEqual(['node', 'yarn']);
  });

  it('reads a missing build.toml as nothing unmet', () => {
    expect(readUnmet(path.join(tmp(), 'build.toml'))).toEqual([]);
  });

  it('rejects an [[unmet]] without a name', () => {
    const file = path.join(tmp(), 'build.toml');
    fs.writeFileSync(file, '[[unmet]]\nversion = "1"\n');
    expect(() => readUnmet(file)).toThrow('[[unmet]] without a name');
  });
});
