/**
 * `node` meaning Bun at launch. `bun --bun run start` makes `node` in the scripts mean Bun through a
 * folder it shares between all its runs, `/tmp/bun-node-<revision>/node -> <the bun that made it>`
 * (Bun 1.3 ignores TMPDIR and BUN_TMPDIR for it). When the Bun that made the link is gone, the link
 * dangles and `node` falls through to the next one on PATH: Node.js, and the app runs on the wrong
 * runtime without a word. So the build makes a launch layer of our own, `bun-node`, holding
 * `node -> this app's bun`, and the launch puts it first on PATH (after Bun's own folder, which Bun
 * puts in front, before Node.js). Not `bin/`: the layer order on PATH is not ours to choose.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Layers } from '../../../lib/cnb/layers.ts';

export const BUN_NODE_LAYER = 'bun-node';

/**
 * Writes the layer (rebuilt every time: it is one symlink) and returns its folder. A Bun in another
 * layer is linked by a relative path, so the layer names no folder of the build.
 */
export function bunNodeLayer(layers: Layers, bunPath: string): string {
  const inLayers = !path.relative(layers.dir, bunPath).startsWith('..');
  const target = inLayers ? path.relative(path.join(layers.dir, BUN_NODE_LAYER), bunPath) : bunPath;
  const layer = layers.fresh(BUN_NODE_LAYER, { launch: true }, { bun: target });
  fs.mkdirSync(layer.path, { recursive: true });
  fs.symlinkSync(target, path.join(layer.path, 'node'));
  return layer.path;
}
