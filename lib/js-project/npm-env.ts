import fs from 'node:fs';
import path from 'node:path';

/**
 * npm's settings for every install a build runs, a node app's and a site generator's alike: the
 * build machine's own ~/.npmrc never changes what gets installed (an empty user config in its
 * place), and no update notice, funding message or audit request. The project's own .npmrc still
 * applies: npm reads it from the folder it runs in.
 */
export function npmBuildEnv(userconfig: string): Record<string, string> {
  return {
    npm_config_userconfig: userconfig,
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
  };
}

/** What the installs of a build need to compile native modules offline (nativeModulesEnv). */
export interface NativeModules {
  /** npm_config_nodedir, when the Node.js has its headers. */
  env: Record<string, string>;
  /** Folders for PATH: npm's node-gyp. */
  path: string[];
  /** The Node.js folder whose headers node-gyp uses, for the log. */
  nodedir?: string;
}

/**
 * A native module without a prebuilt binary is compiled by node-gyp, which by default downloads the
 * Node.js headers from nodejs.org. The Node.js the build installed carries them (`include/node`
 * beside its `bin/`): npm_config_nodedir points node-gyp at them, read from the environment
 * whichever manager runs it (npm, pnpm, Yarn 1 and Berry, Bun), so a compile needs no download.
 * npm's own node-gyp goes on PATH for the managers that bring none: Yarn 1 would install one
 * globally, on the build machine, and Bun would fetch the latest with bunx.
 */
export function nativeModulesEnv(nodeExe: string, npmExe: string | undefined): NativeModules {
  const real = (f: string) => {
    try {
      return fs.realpathSync(f);
    } catch {
      return f;
    }
  };
  const prefix = path.dirname(path.dirname(real(nodeExe)));
  const nodedir = fs.existsSync(path.join(prefix, 'include', 'node', 'common.gypi')) ? prefix : undefined;
  const gyp = npmExe ? path.join(path.dirname(real(npmExe)), 'node-gyp-bin') : undefined;
  return {
    env: nodedir ? { npm_config_nodedir: nodedir } : {},
    path: gyp && fs.existsSync(path.join(gyp, 'node-gyp')) ? [gyp] : [],
    ...(nodedir ? { nodedir } : {}),
  };
}
