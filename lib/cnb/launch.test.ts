import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readLaunchToml, validateLaunch, writeLaunchToml, type LaunchToml } from './launch.ts';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'cnb-launch-'));

describe('launch.toml', () => {
  it('round-trips processes (command array, args, default, working-dir), labels and slices', () => {
    const file = path.join(tmp(), 'launch.toml');
    const launch: LaunchToml = {
      labels: [{ key: 'org.example.x', value: 'y' }],
      processes: [
        { type: 'web', command: ['node', '--enable-source-maps'], args: ['server.js'], default: true, 'working-dir': 'sub' },
        { type: 'worker.v2', command: ['node'], args: ['worker.js'] },
      ],
      slices: [{ paths: ['public/**'] }],
    };
    writeLaunchToml(file, launch);
    expect(fs.readFileSync(file, 'utf8')).toContain('command = [ "node", "--enable-source-maps" ]');
    expect(readLaunchToml(file)).toEqual(launch);
  });

  it('reads a missing launch.toml as undefined', () => {
    expect(readLaunchToml(path.join(tmp(), 'none.toml'))).toBeUndefined();
  });

  it.each<[string, LaunchToml, string]>([
    ['a string command (API < 0.9 form)', { processes: [{ type: 'web', command: 'node server.js' as never }] }, 'command must be a non-empty array of strings'],
    ['an empty command', { processes: [{ type: 'web', command: [] }] }, 'command must be a non-empty array of strings'],
    ['a non-string in command', { processes: [{ type: 'web', command: ['node', 1 as never] }] }, 'command must be a non-empty array of strings'],
    ['direct', { processes: [{ type: 'web', command: ['node'], direct: true }] }, '"direct" is not supported'],
    ['direct = false', { processes: [{ type: 'web', command: ['node'], direct: false }] }, '"direct" is not supported'],
    [
      'two defaults',
      {
        processes: [
          { type: 'a', command: ['x'], default: true },
          { type: 'b', command: ['y'], default: true },
        ],
      },
      'more than one process has default = true',
    ],
    [
      'a duplicate type',
      {
        processes: [
          { type: 'a', command: ['x'] },
          { type: 'a', command: ['y'] },
        ],
      },
      'process type a is defined twice',
    ],
    ['a bad type', { processes: [{ type: 'we b', command: ['x'] }] }, 'process type "we b" must match'],
    ['args as a string', { processes: [{ type: 'web', command: ['x'], args: 'a b' as never }] }, 'args must be an array of strings'],
  ])('rejects %s', (_what, launch, message) => {
    expect(() => validateLaunch(launch)).toThrow(message);
  });

  it('names the file in errors when reading', () => {
    const file = path.join(tmp(), 'launch.toml');
    fs.writeFileSync(file, '[[processes]]\ntype = "web"\ncommand = "node server.js"\n');
    expect(() => readLaunchToml(file)).toThrow(`${file}: process web: command must be a non-empty array`);
  });

  it('reads Buildpack API 0.7 and 0.8 processes: a string command, direct defaulting to false', () => {
    const file = path.join(tmp(), 'launch.toml');
    fs.writeFileSync(
      file,
      '[[processes]]\ntype = "web"\ncommand = "node server.js"\n[[processes]]\ntype = "direct"\ncommand = "node"\nargs = ["a.js"]\ndirect = true\n',
    );
    for (const api of ['0.7', '0.8']) {
      expect(readLaunchToml(file, api)?.processes).toEqual([
        { type: 'web', command: ['node server.js'], direct: false },
        { type: 'direct', command: ['node'], args: ['a.js'], direct: true },
      ]);
    }
    expect(() => readLaunchToml(file, '0.9')).toThrow('command must be a non-empty array of strings (Buildpack API >= 0.9)');
  });

  it.each<[string, LaunchToml, string]>([
    ['an array command', { processes: [{ type: 'web', command: ['node'] }] }, 'command must be a string (Buildpack API 0.8 < 0.9)'],
    ['direct as a string', { processes: [{ type: 'web', command: 'node' as never, direct: 'yes' as never }] }, 'direct must be true or false'],
  ])('rejects, for Buildpack API 0.8, %s', (_what, launch, message) => {
    expect(() => validateLaunch(launch, 'launch.toml', '0.8')).toThrow(message);
  });

  it('accepts one default and no processes at all', () => {
    expect(() =>
      validateLaunch({
        processes: [
          { type: 'a', command: ['x'], default: true },
          { type: 'b', command: ['y'], default: false },
        ],
      }),
    ).not.toThrow();
    expect(() => validateLaunch({})).not.toThrow();
  });
});
