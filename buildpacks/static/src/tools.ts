/**
 * The programs this buildpack runs, all through lib/deps: the operator's own (RBP_TOOL_<NAME>), else
 * the cached install, else a download of the version buildpack.toml lists, checked against its
 * checksum. MkDocs is the exception: the contract runs it with `uvx mkdocs`, so it comes from uv in the
 * build image, or from RBP_TOOL_MKDOCS.
 */
import path from 'node:path';
import type { BuildContext } from '../../../lib/cnb/context.ts';
import { dependenciesOf, findOperatorTool, installTool, operatorVariable, resolveVersion, commandExists, type InstalledTool } from '../../../lib/deps/index.ts';
import { isUserError, UserError } from '../../../lib/errors.ts';
import type { Logger } from '../../../lib/log.ts';

export interface ToolRequest {
  id: string;
  /** For messages: `Static Web Server`. */
  label: string;
  /** A version or range of buildpack.toml's entries. */
  constraint: string;
  /** Whether the app needs it at launch (the servers) or only at build (generators). */
  launch: boolean;
  versionArgs: string[];
  /** Why it is needed, for the error when it cannot be had. */
  purpose: string;
}

export async function installStaticTool(ctx: BuildContext, req: ToolRequest, log: Logger): Promise<InstalledTool> {
  const specs = dependenciesOf(ctx.descriptor, path.join(ctx.buildpackDir, 'buildpack.toml'));
  try {
    return await installTool({
      layers: ctx.layers,
      layerName: req.id,
      spec: resolveVersion(specs, req.id, req.constraint),
      types: { launch: req.launch },
      env: ctx.env,
      log,
      versionArgs: req.versionArgs,
    });
  } catch (e) {
    if (isUserError(e) && ['deps/download-failed', 'deps/no-checksum'].includes(e.id)) throw unavailable(req, e);
    throw e;
  }
}

export function unavailable(req: ToolRequest, cause: UserError): UserError {
  return new UserError({
    id: 'static/tool/unavailable',
    title: `${req.label} ${req.constraint} could not be installed`,
    ...(cause.data.seen ? { seen: cause.data.seen } : {}),
    rule: `${req.purpose}; it is installed from its upstream release, checked against its checksum, or taken from the operator`,
    details: [cause.data.title, ...(cause.data.details ?? [])],
    fix: `let the build reach the URL, set RBP_DEPENDENCY_MIRROR to a mirror holding the release (with its .sha256), or provide ${req.id} with ${operatorVariable(req.id)}=<path>`,
  });
}

/**
 * How MkDocs is run: RBP_TOOL_MKDOCS=<mkdocs executable>, else RBP_TOOL_UVX=<uvx>, else `uvx` from
 * the build image's PATH (the contract's `uvx mkdocs`, which fetches MkDocs from PyPI).
 */
export async function mkdocsPrefix(env: Record<string, string | undefined>, log: Logger): Promise<string[]> {
  const mkdocs = await findOperatorTool({ id: 'mkdocs', env, log, versionArgs: ['--version'] });
  if (mkdocs) return [mkdocs.path];
  const uvx = await findOperatorTool({ id: 'uvx', env, log, versionArgs: ['--version'] });
  if (uvx) return [uvx.path, 'mkdocs'];
  if (commandExists('uvx', env.PATH ?? '')) {
    log.info('running MkDocs with uvx from the build image');
    return ['uvx', 'mkdocs'];
  }
  throw new UserError({
    id: 'static/mkdocs/unavailable',
    title: 'MkDocs cannot be run: neither uvx nor RBP_TOOL_MKDOCS is available',
    seen: { what: 'PATH', value: env.PATH ?? '', where: 'the build image' },
    rule: 'MkDocs sites (mkdocs.yml) are built with `uvx mkdocs build --site-dir <out-dir>`: uv comes with the build image, or the operator provides mkdocs',
    fix: 'add uv to the build image, or set RBP_TOOL_MKDOCS=<path of mkdocs> (or RBP_TOOL_UVX=<path of uvx>)',
  });
}
