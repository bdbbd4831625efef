/**
 * An operator's tool (RBP_TOOL_<NAME>) that the app runs at launch, placed in a launch layer so that
 * an image is self-contained: the executable as `<layer>/bin/<command>` and the shared libraries it
 * loads from outside the system's library folders (FrankenPHP's libphp.so, found through its
 * `$ORIGIN/../lib` rpath) in `<layer>/lib/`, which the launcher puts on LD_LIBRARY_PATH. Libraries
 * of the system folders (glibc, libxml2, …) are the run image's, as for any tool a buildpack installs.
 * RBP_OPERATOR_TOOLS=in-place keeps the tool where it is: rbp's own builds without an image (the
 * app runs on this machine), or a run image that carries the tool at the same path.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { execa } from 'execa';
import type { Layer, Layers } from '../cnb/layers.ts';
import { read } from '../config/read.ts';
import { writeFailure, type WriteTarget } from '../disk.ts';
import { UserError } from '../errors.ts';
import type { Logger } from '../log.ts';
import type { OperatorTool } from './operator.ts';

export const OPERATOR_TOOLS_VARIABLE = 'RBP_OPERATOR_TOOLS';

/** Whether operator tools used at launch are copied into a launch layer (the default) or used in place. */
export function operatorToolPlacement(env: Record<string, string | undefined>): 'copy' | 'in-place' {
  return (read(env, OPERATOR_TOOLS_VARIABLE)?.value as 'copy' | 'in-place' | undefined) ?? 'copy';
}

/** The folders a run image's own libraries are in: a tool's libraries found there are not copied. */
const SYSTEM_LIB = /^\/(usr\/)?lib(32|64|x32)?\//;

/** The libraries `exe` loads from outside the system folders, as the dynamic loader resolves them (ldd). */
export async function privateLibraries(exe: string): Promise<{ soname: string; file: string }[]> {
  const r = await execa('ldd', [exe], { reject: false, all: true, timeout: 30_000, stdin: 'ignore' });
  if (r.exitCode !== 0) return []; // a static executable ("not a dynamic executable"), or no ldd: nothing to add
  const out: { soname: string; file: string }[] = [];
  for (const line of r.stdout.split('\n')) {
    const m = /^\s*(\S+)\s+=>\s+(\/\S+)\s+\(0x[0-9a-f]+\)/.exec(line);
    if (!m) continue;
    const file = fs.realpathSync(m[2]!);
    if (!SYSTEM_LIB.test(m[2]!) && !SYSTEM_LIB.test(file)) out.push({ soname: m[1]!, file });
  }
  return out;
}

function isElf(file: string): boolean {
  const fd = fs.openSync(file, 'r');
  try {
    const b = Buffer.alloc(4);
    fs.readSync(fd, b, 0, 4, 0);
    return b.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
  } finally {
    fs.closeSync(fd);
  }
}

/** What decides whether a copy can be reused: the tool's files as they are now. */
export type OperatorCopyMetadata = { id: string; version: string; operator: string; files: string };

function filesDigest(files: string[]): string {
  const h = crypto.createHash('sha256');
  for (const f of files) {
    const st = fs.statSync(f, { bigint: true });
    h.update(`${f}\0${st.size}\0${st.mtimeNs}\0${st.ino}\0`);
  }
  return h.digest('hex').slice(0, 32);
}

/**
 * Copies the operator's tool into the launch layer `layerName` (reused while the tool's files are
 * unchanged) and returns the layer and the executable in it. A tool that is not a program (a
 * script, whose interpreter and files cannot be followed) is refused with what to do instead.
 */
export async function copyOperatorTool(o: {
  layers: Layers;
  layerName: string;
  tool: OperatorTool;
  id: string;
  command: string;
  types: { build?: boolean; launch?: boolean };
  log: Logger;
  /** How a write failure names the layer (lib/disk.ts); default its path. */
  place?: WriteTarget;
}): Promise<{ layer: Layer<OperatorCopyMetadata>; path: string }> {
  const exe = fs.realpathSync(o.tool.path);
  if (!isElf(exe)) {
    throw new UserError({
      id: 'deps/operator-tool/not-copyable',
      title: `${o.tool.variable} cannot be carried into the app image`,
      seen: { what: o.tool.variable, value: o.tool.path, where: 'the operator configuration' },
      rule: `The app runs ${o.id} at launch, and an image must hold what it runs: an operator's tool is copied into a launch layer with the libraries it loads. ${exe} is not a program (a script: its interpreter and files cannot be followed).`,
      fix: `Unset ${o.tool.variable} to let the buildpack install ${o.id}, point it at the program itself, or set ${OPERATOR_TOOLS_VARIABLE}=in-place if the run image has ${o.tool.path} at that same path.`,
    });
  }
  const libs = await privateLibraries(exe);
  const sources = [exe, ...libs.map((l) => l.file)];
  const metadata: OperatorCopyMetadata = { id: o.id, version: o.tool.version ?? 'unknown', operator: o.tool.path, files: filesDigest(sources) };
  const layer = o.layers.get(o.layerName, { launch: Boolean(o.types.launch), build: Boolean(o.types.build), cache: Boolean(o.types.build) }, metadata);
  const target = path.join(layer.path, 'bin', o.command);
  if (layer.state === 'reused') {
    o.log.info(`reused the copy of ${o.tool.variable}=${o.tool.path} in the image (unchanged)`);
    return { layer, path: target };
  }
  try {
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.copyFileSync(exe, target, fs.constants.COPYFILE_FICLONE);
    fs.chmodSync(target, 0o755);
    if (libs.length) fs.mkdirSync(path.join(layer.path, 'lib'), { recursive: true });
    for (const l of libs) fs.copyFileSync(l.file, path.join(layer.path, 'lib', l.soname), fs.constants.COPYFILE_FICLONE);
  } catch (e) {
    o.layers.remove(o.layerName);
    const bytes = sources.reduce((n, f) => n + fs.statSync(f).size, 0);
    throw writeFailure(e, { ...(o.place ?? { folder: layer.path, what: `the layer ${o.layerName}` }), needed: { bytes } }) ?? e;
  }
  const size = [target, ...libs.map((l) => path.join(layer.path, 'lib', l.soname))].reduce((n, f) => n + fs.statSync(f).size, 0);
  o.log.info(
    `copied ${o.tool.variable}=${o.tool.path}${librariesPhrase(libs.map((l) => l.soname))} into the launch layer ${o.layerName} (${(size / 1e6).toFixed(1)} MB), so the image runs it anywhere`,
  );
  return { layer, path: target };
}

/** ` and libphp.so`, or ` and 75 libraries it loads (libphp.so, libxml2.so.2, libz.so.1, …)`: one line, however many. */
export function librariesPhrase(sonames: string[]): string {
  if (sonames.length === 0) return '';
  if (sonames.length === 1) return ` and ${sonames[0]}`;
  const shown = sonames.slice(0, 3).join(', ');
  return ` and ${sonames.length} libraries it loads (${shown}${sonames.length > 3 ? ', …' : ''})`;
}
