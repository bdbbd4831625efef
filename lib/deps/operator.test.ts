import fs from 'node:fs';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Layers } from '../cnb/layers.ts';
import type { DependencySpec } from './catalog.ts';
import { installTool } from './install.ts';
import { findOperatorTool, operatorVariable } from './operator.ts';
import { captureLog, tempDir } from '../../test/helpers/deps.ts';
import { rejectedUserError as userError, stableRendering } from '../../test/helpers/user-error.ts';

let root: string;
let cap: ReturnType<typeof captureLog>;

beforeEach(() => {
  root = tempDir();
  cap = captureLog();
});
afterEach(() => fs.rmSync(root, { recursive: true, force: true }));

/** A caddy stand-in that prints its version only for `caddy version`, like the real one. */
function fakeCaddy(version: string, mode = 0o755): string {
  const file = path.join(root, 'bin', 'caddy');
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, `#!/bin/sh\n[ "$1" = version ] || { echo "unknown command $1" >&2; exit 1; }\necho "v${version} h1:abcdef="\n`, { mode });
  return file;
}

/** Nothing can be downloaded from here: an operator's tool must never need it. */
const caddy: DependencySpec = {
  id: 'caddy',
  version: '2.11.2',
  uri: 'http://127.0.0.1:9/caddy_2.11.2_linux_amd64.tar.gz',
  stripComponents: 0,
  archive: 'tar.gz',
  bin: 'caddy',
};

function install(env: Record<string, string>, layersDir = path.join(root, 'layers')) {
  return installTool({ layers: new Layers(layersDir), layerName: 'caddy', spec: caddy, env, log: cap.log, versionArgs: ['version'] });
}

describe('operator-provided tools', () => {
  it('names the variable after the id', () => {
    expect(operatorVariable('caddy')).toBe('RBP_TOOL_CADDY');
    expect(operatorVariable('frankenphp')).toBe('RBP_TOOL_FRANKENPHP');
    expect(operatorVariable('static-web-server')).toBe('RBP_TOOL_STATIC_WEB_SERVER');
  });

  it('uses the tool as is and logs its version, without a warning when it is the expected one', async () => {
    const file = fakeCaddy('2.11.2');
    const r = await install({ RBP_TOOL_CADDY: file });
    expect(r).toEqual({ id: 'caddy', path: file, version: '2.11.2', source: 'operator', layer: undefined });
    expect(cap.text()).toBe(`- using caddy 2.11.2 from RBP_TOOL_CADDY=${file} (provided by the operator)\n`);
  });

  it('warns, and still uses it, when the version differs from the contract', async () => {
    const file = fakeCaddy('2.6.2');
    const r = await install({ RBP_TOOL_CADDY: file });
    expect(r.version).toBe('2.6.2');
    expect(cap.text()).toContain(`! WARNING RBP_TOOL_CADDY=${file} is caddy 2.6.2, not 2.11.2 as the contract asks; using it as is`);
  });

  it('accepts any version within an expected range', async () => {
    const file = fakeCaddy('2.11.4');
    const t = await findOperatorTool({ id: 'caddy', env: { RBP_TOOL_CADDY: file }, log: cap.log, versionArgs: ['version'], expected: '2.11' });
    expect(t?.version).toBe('2.11.4');
    expect(cap.text()).not.toContain('WARNING');
  });

  it('warns when the tool prints no version', async () => {
    const file = fakeCaddy('2.11.2');
    const t = await findOperatorTool({ id: 'caddy', env: { RBP_TOOL_CADDY: file }, log: cap.log, versionArgs: ['--version'] });
    expect(t).toEqual({ variable: 'RBP_TOOL_CADDY', path: file, version: undefined });
    expect(cap.text()).toContain('! WARNING RBP_TOOL_CADDY=');
    expect(cap.text()).toContain('could not read a version');
  });

  it('extracts the version with the caller’s pattern', async () => {
    const file = fakeCaddy('2.11.2');
    const t = await findOperatorTool({ id: 'caddy', env: { RBP_TOOL_CADDY: file }, log: cap.log, versionArgs: ['version'], versionPattern: /^v(\d+\.\d+)/ });
    expect(t?.version).toBe('2.11');
  });

  it('refuses a path that does not exist', async () => {
    const e = await userError(install({ RBP_TOOL_CADDY: '/nonexistent/caddy' }));
    expect(e.data.id).toBe('deps/operator-tool-missing');
    expect(stableRendering(e)).toMatchSnapshot();
    expect(e.data.seen).toEqual({ what: 'RBP_TOOL_CADDY', value: '/nonexistent/caddy', where: 'the operator configuration' });
    expect(e.data.details).toEqual(['/nonexistent/caddy does not exist']);
  });

  it('refuses a file that is not executable', async () => {
    const file = fakeCaddy('2.11.2', 0o644);
    const e = await userError(install({ RBP_TOOL_CADDY: file }));
    expect(e.data.id).toBe('deps/operator-tool-missing');
    expect(e.data.details).toEqual([`${file} exists but is not an executable file`]);
  });

  it('drops a layer an earlier build installed, so it is neither cached nor exported', async () => {
    const layersDir = path.join(root, 'layers');
    fs.mkdirSync(path.join(layersDir, 'caddy', 'bin'), { recursive: true });
    fs.writeFileSync(path.join(layersDir, 'caddy.toml'), '[types]\ncache = true\n[metadata]\nversion = "2.11.1"\n');
    await install({ RBP_TOOL_CADDY: fakeCaddy('2.11.2') }, layersDir);
    // Only the buildpack-wide SBOM naming the operator's caddy is left (CycloneDX and SPDX).
    expect(fs.readdirSync(layersDir).filter((f) => !/^(launch|build)\.sbom\.(cdx|spdx)\.json$/.test(f))).toEqual([]);
    const sbom = fs
      .readdirSync(layersDir)
      .filter((f) => f.endsWith('.cdx.json'))
      .map((f) => JSON.parse(fs.readFileSync(path.join(layersDir, f), 'utf8')) as { components: { name: string; version?: string }[] });
    expect(sbom.flatMap((d) => d.components)).toEqual([expect.objectContaining({ name: 'caddy', version: '2.11.2' })]);
  });
});
