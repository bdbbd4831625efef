/**
 * What rbp says about a buildpack.toml it cannot take, and a Buildpack API the lifecycle does not
 * run: one block naming the file, the line and the rule, no stack trace, and the
 * lifecycle's exit code (1 for a file it cannot read, 12 for the API), run through the CLI as a
 * user runs `rbp detect`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { PhaseFailure } from '../../lib/cnb/exit.ts';
import type { UserError } from '../../lib/errors.ts';
import { main } from '../../lib/platform/cli.ts';
import { planLaunch } from '../../lib/platform/launcher.ts';
import { writeToml } from '../../lib/cnb/toml.ts';
import { stableRendering } from '../helpers/user-error.ts';
import { tmpDir } from '../helpers/rbp.ts';

const TOML = `api = "0.10"

[buildpack]
id = "vendor/my_bp"
version = "1.0.0"
name = "Mine"
`;

/** A buildpack whose buildpack.toml is `toml`, and an app. */
function buildpackWith(toml: string): { dir: string; app: string } {
  const root = tmpDir('rbp-bptoml-');
  const dir = path.join(root, 'bp');
  fs.mkdirSync(path.join(dir, 'bin'), { recursive: true });
  fs.writeFileSync(path.join(dir, 'buildpack.toml'), toml);
  for (const phase of ['detect', 'build']) fs.writeFileSync(path.join(dir, 'bin', phase), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  const app = path.join(root, 'app');
  fs.mkdirSync(app);
  return { dir, app };
}

async function detectWith(toml: string): Promise<{ code: number; err: string; text: string; dir: string }> {
  const { dir, app } = buildpackWith(toml);
  let err = '';
  const sink = (f: (s: string) => void) =>
    new Writable({
      write: (c, _e, cb) => {
        f(String(c));
        cb();
      },
    });
  const code = await main(['detect', app, '--buildpack', dir], { stdout: sink(() => undefined), stderr: sink((s) => (err += s)) });
  // eslint-disable-next-line no-control-regex
  const lines = err.replace(/\x1b\[[0-9;]*m/g, '').split('\n');
  const start = lines.findIndex((l) => l.startsWith('! ERROR'));
  const end = lines.findIndex((l, i) => i > start && l.startsWith('! (error id:'));
  const text = lines
    .slice(start, end + 1)
    .join('\n')
    .replaceAll(path.dirname(dir), '<root>');
  return { code, err, text, dir };
}

describe('buildpack.toml', () => {
  it.each([
    ['platform/buildpack/toml-syntax', 1, 'bp/buildpack.toml:6:', TOML.replace('name = "Mine"', 'name = "Mine')],
    ['platform/buildpack/toml-invalid', 1, 'bp/buildpack.toml:1)', TOML.replace('api = "0.10"', 'api = 0.10')],
    ['platform/buildpack/api-unsupported', 12, 'bp/buildpack.toml:1)', TOML.replace('api = "0.10"', 'api = "0.12"')],
  ])('%s: one block with the file and line, exit %s, no stack trace', async (id, exit, where, toml) => {
    const r = await detectWith(toml);
    expect(r.code, r.err).toBe(exit);
    expect(r.text).toContain(`(error id: ${id})`);
    expect(r.text).toContain(where);
    expect(r.err).not.toMatch(/^\s+at /m);
    expect(r.text).toMatchSnapshot();
  });

  it('an id with _ is accepted: detect passes', async () => {
    const r = await detectWith(TOML);
    expect(r.code, r.err).toBe(0);
  });
});

describe('rbp run', () => {
  it('platform/launch/api-unsupported: a build whose buildpack is of an API the launcher does not run, exit 12', () => {
    const out = path.join(tmpDir('rbp-bptoml-out-'), 'out');
    writeToml(path.join(out, 'layers', 'config', 'metadata.toml'), {
      buildpacks: [{ id: 'vendor/old', version: '1.0.0', api: '0.6' }],
      processes: [{ type: 'web', command: ['true'], args: [], direct: true, 'buildpack-id': 'vendor/old' }],
      'buildpack-default-process-type': 'web',
    });
    let e: PhaseFailure | undefined;
    try {
      planLaunch({ outDir: out, port: 8080, userEnv: {}, instance: 'XS', memory: 1 << 30, args: [] });
    } catch (err) {
      e = err as PhaseFailure;
    }
    expect(e).toBeInstanceOf(PhaseFailure);
    expect(e!.code).toBe(12);
    expect(stableRendering(e!.shown as UserError, { [out]: '<out>' })).toMatchSnapshot();
  });
});
