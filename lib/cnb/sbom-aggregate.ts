/**
 * The build's SBOM, gathered as the lifecycle's builder does (cnb-spec.md §7): each buildpack's
 * `launch.sbom.<ext>` and launch layers' `<layer>.sbom.<ext>` are copied to
 * `<layers>/sbom/launch/<escaped-id>[/<layer>]/sbom.<ext>`, `build.sbom.<ext>` and the other layers'
 * to `<layers>/sbom/build/...`. The launch set is what an image would carry as its SBOM layer.
 */
import fs from 'node:fs';
import path from 'node:path';
import { escapeId } from './descriptor.ts';
import { readLayerToml } from './layers.ts';

const SBOM_FILE = /^([^.]+)\.sbom\.(cdx\.json|spdx\.json|syft\.json)$/;

/** Writes `<layersRoot>/sbom/` afresh from the buildpacks' layers dirs; returns the files written, relative to layersRoot. */
export function aggregateSboms(layersRoot: string, buildpackIds: string[]): string[] {
  const root = path.join(layersRoot, 'sbom');
  fs.rmSync(root, { recursive: true, force: true });
  const written: string[] = [];
  const put = (kind: string, esc: string, layer: string | undefined, ext: string, from: string) => {
    const to = path.join(root, kind, esc, ...(layer ? [layer] : []), `sbom.${ext}`);
    fs.mkdirSync(path.dirname(to), { recursive: true });
    fs.copyFileSync(from, to);
    written.push(path.relative(layersRoot, to));
  };
  for (const id of buildpackIds) {
    const esc = escapeId(id);
    const dir = path.join(layersRoot, esc);
    let files: string[];
    try {
      files = fs.readdirSync(dir).sort();
    } catch {
      continue;
    }
    for (const f of files) {
      const m = SBOM_FILE.exec(f);
      if (!m) continue;
      const [, name, ext] = m as unknown as [string, string, string];
      const from = path.join(dir, f);
      if (name === 'launch' || name === 'build') {
        put(name, esc, undefined, ext, from);
        continue;
      }
      let types;
      try {
        types = readLayerToml(path.join(dir, `${name}.toml`))?.types;
      } catch {
        types = undefined;
      }
      if (!types) continue; // no <layer>.toml: not a layer of this build
      put(types.launch ? 'launch' : 'build', esc, name, ext, from);
    }
  }
  return written;
}
