import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'smol-toml';
import { describe, expect, it } from 'vitest';
import { LayerEnv } from './env.ts';
import { checkLayerName, Layers, metadataChanges, readLayerToml } from './layers.ts';

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), 'cnb-layers-'));

/** What the lifecycle's restorer leaves: `<layer>.toml` with [metadata] only, maybe the folder. */
function restore(dir: string, name: string, metadata: Record<string, unknown>, contents: boolean): void {
  fs.writeFileSync(
    path.join(dir, `${name}.toml`),
    `[metadata]\n${Object.entries(metadata)
      .map(([k, v]) => `${k} = ${JSON.stringify(v)}`)
      .join('\n')}\n`,
  );
  if (contents) {
    fs.mkdirSync(path.join(dir, name, 'bin'), { recursive: true });
    fs.writeFileSync(path.join(dir, name, 'bin', 'tool'), 'old');
  }
}

describe('<layer>.toml', () => {
  it('reads types under [types] and metadata', () => {
    const f = path.join(tmp(), 'l.toml');
    fs.writeFileSync(f, '[types]\nlaunch = true\ncache = true\n[metadata]\nversion = "1"\n');
    expect(readLayerToml(f)).toEqual({ types: { launch: true, build: false, cache: true }, metadata: { version: '1' } });
  });

  it('treats a missing [types] as all false (a restored toml)', () => {
    const f = path.join(tmp(), 'l.toml');
    fs.writeFileSync(f, '[metadata]\nversion = "1"\n');
    expect(readLayerToml(f)?.types).toEqual({ launch: false, build: false, cache: false });
  });

  it.each(['launch', 'build', 'cache'])('rejects a top-level %s flag', (flag) => {
    const f = path.join(tmp(), 'l.toml');
    fs.writeFileSync(f, `${flag} = true\n[metadata]\n`);
    expect(() => readLayerToml(f)).toThrow(`"${flag}" should be in the [types] table`);
  });

  it('returns undefined for a missing file', () => {
    expect(readLayerToml(path.join(tmp(), 'none.toml'))).toBeUndefined();
  });

  it.each(['build', 'launch', 'store', 'a.b', 'a/b', ''])('rejects the layer name %j', (name) => {
    expect(() => checkLayerName(name)).toThrow('invalid layer name');
  });

  it('accepts ordinary layer names', () => {
    expect(() => checkLayerName('node_modules-2')).not.toThrow();
  });
});

describe('Layers.get: typed reuse', () => {
  it('creates a layer that was not restored, writing [types] and [metadata]', () => {
    const dir = tmp();
    const layer = new Layers(dir).get('node', { launch: true, cache: true }, { version: '22.3.0' });
    expect(layer.state).toBe('created');
    expect(layer.reason).toBe('no previous layer');
    expect(fs.statSync(layer.path).isDirectory()).toBe(true);
    expect(parse(fs.readFileSync(path.join(dir, 'node.toml'), 'utf8'))).toEqual({
      types: { launch: true, build: false, cache: true },
      metadata: { version: '22.3.0' },
    });
  });

  it('reuses a restored layer with the same metadata and keeps its contents', () => {
    const dir = tmp();
    restore(dir, 'node', { version: '22.3.0', arch: 'amd64' }, true);
    const layer = new Layers(dir).get('node', { launch: true, cache: true }, { arch: 'amd64', version: '22.3.0' });
    expect(layer.state).toBe('reused');
    expect(layer.reason).toBe('metadata unchanged');
    expect(fs.readFileSync(path.join(layer.path, 'bin', 'tool'), 'utf8')).toBe('old');
    // the restored toml had no [types]: they are written again
    expect(readLayerToml(path.join(dir, 'node.toml'))?.types).toEqual({ launch: true, build: false, cache: true });
  });

  it('recreates a layer whose metadata changed, naming the changed key and both values', () => {
    const dir = tmp();
    restore(dir, 'node', { version: '20.1.0', arch: 'amd64' }, true);
    const layer = new Layers(dir).get('node', { launch: true, cache: true }, { version: '22.3.0', arch: 'amd64' });
    expect(layer.state).toBe('created');
    expect(layer.reason).toBe('version changed (20.1.0 → 22.3.0)');
    expect(fs.readdirSync(layer.path)).toEqual([]);
  });

  it('names added and removed keys as unset', () => {
    expect(metadataChanges({ a: 1 }, { b: { x: [1] } })).toEqual(['a changed (1 → unset)', 'b changed (unset → {"x":[1]})']);
    expect(metadataChanges(undefined, { a: 1 })).toEqual([]);
    expect(metadataChanges({ o: { b: 1, a: 2 } }, { o: { a: 2, b: 1 } })).toEqual([]);
  });

  it('reuses a launch-only layer restored with metadata and no folder (the exporter keeps the previous one)', () => {
    const dir = tmp();
    restore(dir, 'app', { digest: 'abc' }, false);
    const layer = new Layers(dir).get('app', { launch: true }, { digest: 'abc' });
    expect(layer.state).toBe('reused');
    expect(layer.reason).toBe('metadata unchanged; contents kept from the previous build');
    expect(fs.existsSync(layer.path)).toBe(false);
    expect(readLayerToml(path.join(dir, 'app.toml'))).toEqual({ types: { launch: true, build: false, cache: false }, metadata: { digest: 'abc' } });
  });

  it('creates a cached layer restored with metadata but no contents', () => {
    const dir = tmp();
    restore(dir, 'deps', { v: 1 }, false);
    const layer = new Layers(dir).get('deps', { cache: true }, { v: 1 });
    expect(layer.state).toBe('created');
    expect(layer.reason).toBe('previous contents missing');
    expect(fs.statSync(layer.path).isDirectory()).toBe(true);
  });

  it('writeEnv writes the env dirs inside the layer (creating it for a reused launch-only layer)', () => {
    const dir = tmp();
    const layer = new Layers(dir).get('x', { launch: true }, {});
    layer.writeEnv(new LayerEnv().override('A', '1'));
    expect(fs.readFileSync(path.join(layer.path, 'env', 'A.override'), 'utf8')).toBe('1');
  });

  it('fresh() never reuses, remove() drops the folder, toml and SBOM', () => {
    const dir = tmp();
    restore(dir, 'x', { v: 1 }, true);
    const layers = new Layers(dir);
    expect(layers.fresh('x', { build: true }, { v: 1 }).state).toBe('created');
    fs.writeFileSync(path.join(dir, 'x.sbom.cdx.json'), '{}');
    fs.writeFileSync(path.join(dir, 'xy.toml'), '');
    layers.remove('x');
    expect(fs.readdirSync(dir)).toEqual(['xy.toml']);
  });
});
