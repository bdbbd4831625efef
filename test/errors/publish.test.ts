/**
 * What rbp says when an image cannot be named, pushed or made self-contained: the errors that need
 * no registry of their own (the registry's answers are rendered in test/package/registry.test.ts,
 * against a real one). Each rendered once, as a user reads it.
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { Layers } from '../../lib/cnb/layers.ts';
import { copyOperatorTool } from '../../lib/deps/operator-copy.ts';
import { parseImageRef } from '../../lib/package/image-ref.ts';
import { OciLayoutWriter } from '../../lib/package/oci-layout.ts';
import { findCredentials } from '../../lib/package/registry-auth.ts';
import { pushImages } from '../../lib/package/registry.ts';
import { tmpDir } from '../helpers/rbp.ts';
import { quietLogger, rejectedUserError, stableRendering, thrownUserError } from '../helpers/user-error.ts';

describe('image names', () => {
  it.each([
    ['upper case', 'Registry.example/Team/App'],
    ['a bad tag', 'registry.example/app:-latest'],
    ['a push to a digest', `registry.example/app@sha256:${'a'.repeat(64)}`],
  ])('platform/image-name/invalid: %s', (_what, name) => {
    const e = thrownUserError(() => parseImageRef(name, '--image', { push: true }));
    expect(e.id).toBe('platform/image-name/invalid');
    expect(stableRendering(e)).toMatchSnapshot();
  });

  it('reads names as Docker and pack do', () => {
    expect(parseImageRef('node', 'x')).toEqual({ registry: 'docker.io', repository: 'library/node' });
    expect(parseImageRef('localhost:5000/rbp:bookworm', 'x')).toEqual({ registry: 'localhost:5000', repository: 'rbp', tag: 'bookworm' });
    expect(parseImageRef('registry.example.com/team/app-run:1.0', 'x')).toEqual({ registry: 'registry.example.com', repository: 'team/app-run', tag: '1.0' });
    expect(parseImageRef('team/app', 'x')).toEqual({ registry: 'docker.io', repository: 'team/app' });
  });
});

describe('registry', () => {
  it('platform/registry/unreachable: nothing listens on the port', async () => {
    // A port that was free a moment ago: the connection is refused.
    const port = await new Promise<number>((resolve) => {
      const s = net.createServer().listen(0, '127.0.0.1', () => {
        const p = (s.address() as net.AddressInfo).port;
        s.close(() => resolve(p));
      });
    });
    const layout = path.join(tmpDir('rbp-push-'), 'layout');
    const w = new OciLayoutWriter(layout);
    const src = tmpDir('rbp-push-src-');
    fs.writeFileSync(path.join(src, 'hello'), 'hello\n');
    const l = await w.addLayer(src);
    w.finish({ architecture: 'amd64', os: 'linux', config: {}, rootfs: { type: 'layers', diff_ids: [l.diffID] } }, [l]);
    const e = await rejectedUserError(pushImages([{ layout, tag: 'latest', ref: parseImageRef(`127.0.0.1:${port}/app:1`, '--image') }], quietLogger()));
    expect(e.id).toBe('platform/registry/unreachable');
    expect(stableRendering(e)).toMatchSnapshot();
  });

  it('platform/registry/config: a Docker config file that is not JSON', async () => {
    const dir = tmpDir('rbp-docker-config-');
    fs.writeFileSync(path.join(dir, 'config.json'), '{"auths": {');
    const e = await rejectedUserError(findCredentials('registry.example', { DOCKER_CONFIG: dir }));
    expect(e.id).toBe('platform/registry/config');
    expect(stableRendering(e, { [dir]: '<dir>' })).toMatchSnapshot();
  });

  it('platform/registry/credential-helper: a credential helper that is not installed', async () => {
    const dir = tmpDir('rbp-docker-config-');
    fs.writeFileSync(path.join(dir, 'config.json'), JSON.stringify({ credsStore: 'rbp-test-not-installed' }));
    const e = await rejectedUserError(findCredentials('registry.example', { DOCKER_CONFIG: dir }));
    expect(e.id).toBe('platform/registry/credential-helper');
    expect(stableRendering(e, { [dir]: '<dir>' })).toMatchSnapshot();
  });

  it('reads credentials as docker login writes them, for the registry asked only', async () => {
    const dir = tmpDir('rbp-docker-config-');
    fs.writeFileSync(
      path.join(dir, 'config.json'),
      JSON.stringify({
        auths: {
          'registry.example:5000': { auth: Buffer.from('me:s3cret').toString('base64') },
          'https://index.docker.io/v1/': { username: 'hub', password: 'pw' },
        },
      }),
    );
    expect((await findCredentials('registry.example:5000', { DOCKER_CONFIG: dir })).credentials).toEqual({ username: 'me', password: 's3cret' });
    expect((await findCredentials('docker.io', { DOCKER_CONFIG: dir })).credentials).toEqual({ username: 'hub', password: 'pw' });
    expect((await findCredentials('other.example', { DOCKER_CONFIG: dir })).credentials).toBeUndefined();
  });
});

describe('operator tools in an image', () => {
  it('deps/operator-tool/not-copyable: a script cannot be carried into the image', async () => {
    const dir = tmpDir('rbp-operator-');
    const script = path.join(dir, 'caddy');
    fs.writeFileSync(script, '#!/bin/sh\necho v2.11.2\n', { mode: 0o755 });
    const layers = path.join(dir, 'layers');
    fs.mkdirSync(layers);
    const e = await rejectedUserError(
      copyOperatorTool({
        layers: new Layers(layers),
        layerName: 'caddy',
        tool: { variable: 'RBP_TOOL_CADDY', path: script, version: '2.11.2' },
        id: 'caddy',
        command: 'caddy',
        types: { launch: true },
        log: quietLogger(),
      }),
    );
    expect(e.id).toBe('deps/operator-tool/not-copyable');
    expect(stableRendering(e, { [dir]: '<dir>' })).toMatchSnapshot();
  });

  it('copies a program and the libraries it loads from outside the system folders, and reuses the copy', async () => {
    const dir = tmpDir('rbp-operator-');
    const layers = path.join(dir, 'layers');
    fs.mkdirSync(layers);
    const node = fs.realpathSync(process.execPath);
    const tool = { variable: 'RBP_TOOL_NODE', path: node, version: process.versions.node };
    const first = await copyOperatorTool({
      layers: new Layers(layers),
      layerName: 'node',
      tool,
      id: 'node',
      command: 'node',
      types: { launch: true },
      log: quietLogger(),
    });
    expect(first.layer.state).toBe('created');
    expect(fs.statSync(first.path).size).toBe(fs.statSync(node).size);
    expect(first.path).toBe(path.join(layers, 'node', 'bin', 'node'));
    const again = await copyOperatorTool({
      layers: new Layers(layers),
      layerName: 'node',
      tool,
      id: 'node',
      command: 'node',
      types: { launch: true },
      log: quietLogger(),
    });
    expect(again.layer.state).toBe('reused');
  });
});
