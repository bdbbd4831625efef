/**
 * The Node.js and npm a JavaScript generator builds with: those a node app of the same project
 * would get, decided and installed by the same code (lib/js-project): engines.node, else
 * CC_NODE_VERSION, else the latest LTS; the npm bundled with that Node.js; npm's settings of a node
 * build (the project's own .npmrc, never the build machine's ~/.npmrc; node-gyp pointed at this
 * Node.js's headers). Never the build image's own
 * node and npm: an Astro that needs Node.js 22 builds on a build image that has 20. The layers are
 * build-only: the site is served without Node.js.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BuildContext } from '../../../lib/cnb/context.ts';
import { readJsonIfAny } from '../../../lib/fsx.ts';
import type { Logger } from '../../../lib/log.ts';
import { installNode, installNpm, toolRegistryClient, type ToolEnv } from '../../../lib/js-project/node-tools.ts';
import { endOfLife, nodeConstraint, type EnginesField } from '../../../lib/js-project/node-version.ts';
import { nativeModulesEnv, npmBuildEnv } from '../../../lib/js-project/npm-env.ts';

export interface JsRuntime {
  /** The Node.js version installed. */
  node: string;
  /** PATH (Node.js and npm first) and npm's settings, for the install and the generator's commands. */
  env: Record<string, string>;
  /** Removes the empty user config put in place of ~/.npmrc. */
  done: () => void;
}

/** engines.node when it is a string: any other value is no constraint (the generator's own check decides). */
function enginesOf(appDir: string): EnginesField {
  const pkg = readJsonIfAny<{ engines?: { node?: unknown } } | null>(path.join(appDir, 'package.json'));
  return typeof pkg?.engines?.node === 'string' ? { engines: { node: pkg.engines.node } } : {};
}

export async function jsRuntime(ctx: BuildContext, log: Logger): Promise<JsRuntime> {
  const version = nodeConstraint(enginesOf(ctx.appDir), ctx.env, path.join(ctx.appDir, 'package.json'));
  const tools: ToolEnv = { layers: ctx.layers, env: ctx.env, log, npm: toolRegistryClient(ctx.env, log), types: { build: true, launch: false } };
  const node = await log.step('Node.js for the generator', () => installNode(tools, version.constraint, version.origin));
  log.info(
    `Node.js ${node.version} (asked: "${version.constraint}" from ${version.source === 'default' ? 'the default (latest LTS)' : version.source}), as a node app of this project would get`,
  );
  if (version.ignored) log.info(`CC_NODE_VERSION=${version.ignored} is ignored: engines.node in package.json takes precedence`);
  const eol = endOfLife(node.version);
  if (eol.eol) log.warn(`Node.js ${node.version} is end-of-life since ${eol.end}: it gets no security fixes`);
  const npm = await log.step('npm', () => installNpm(tools, node.version));
  log.info(`npm ${npm.version} (${npm.tool.source === 'operator' ? 'provided by the operator' : `bundled with Node.js ${node.version}`})`);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rbp-static-npm-'));
  const userconfig = path.join(tmp, 'npmrc');
  fs.writeFileSync(userconfig, '');
  // A native module of the generator's dependencies compiles against this Node.js's headers, with no download.
  const native = nativeModulesEnv(node.tool.path, npm.tool.path);
  return {
    node: node.version,
    env: {
      PATH: [...new Set([node.binDir, npm.binDir]), ...native.path, ctx.env.PATH ?? '/usr/local/bin:/usr/bin:/bin'].join(':'),
      ...npmBuildEnv(userconfig),
      ...native.env,
    },
    done: () => fs.rmSync(tmp, { recursive: true, force: true }),
  };
}
