// Bundles every buildpacks/<name>/ into a complete CNB buildpack directory dist/buildpacks/<name>/
// (buildpack.toml + bin/detect, bin/build, bin/launch: one self-contained file each) and the CLI
// into dist/rbp.js.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const finalDist = path.join(root, 'dist');
// Built aside and swapped in, so tests running against dist/ never see half a build.
const dist = path.join(root, `.dist-${process.pid}`);
const ENTRYPOINTS = ['detect', 'build', 'launch'];

fs.rmSync(dist, { recursive: true, force: true });
fs.mkdirSync(dist, { recursive: true });

const common = { bundle: true, platform: 'node', target: 'node20', logLevel: 'warning', legalComments: 'none' };

const buildpacksDir = path.join(root, 'buildpacks');
const names = fs.readdirSync(buildpacksDir).filter((n) => fs.existsSync(path.join(buildpacksDir, n, 'buildpack.toml')));
await Promise.all(
  names.flatMap((name) => {
    const src = path.join(buildpacksDir, name);
    const out = path.join(dist, 'buildpacks', name);
    fs.mkdirSync(path.join(out, 'bin'), { recursive: true });
    fs.copyFileSync(path.join(src, 'buildpack.toml'), path.join(out, 'buildpack.toml'));
    // bin/* have no extension: pin CommonJS so Node never guesses from a parent package.json.
    fs.writeFileSync(path.join(out, 'package.json'), '{ "type": "commonjs" }\n');
    return ENTRYPOINTS.map(async (entry) => {
      const file = path.join(src, 'src', `${entry}.ts`);
      if (!fs.existsSync(file)) throw new Error(`${name}: src/${entry}.ts is missing`);
      const outfile = path.join(out, 'bin', entry);
      await esbuild.build({ ...common, entryPoints: [file], outfile, format: 'cjs', banner: { js: '#!/usr/bin/env node' } });
      fs.chmodSync(outfile, 0o755);
    });
  }),
);

const { version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
await esbuild.build({
  ...common,
  define: { __RBP_VERSION__: JSON.stringify(version) },
  entryPoints: [path.join(root, 'scripts', 'rbp.ts')],
  outfile: path.join(dist, 'rbp.js'),
  format: 'esm',
  banner: { js: "#!/usr/bin/env node\nimport { createRequire as __rbpRequire } from 'node:module';\nconst require = __rbpRequire(import.meta.url);" },
});
fs.chmodSync(path.join(dist, 'rbp.js'), 0o755);
const old = `${finalDist}.old-${process.pid}`;
if (fs.existsSync(finalDist)) fs.renameSync(finalDist, old);
fs.renameSync(dist, finalDist);
fs.rmSync(old, { recursive: true, force: true });
console.log(`built ${names.map((n) => `dist/buildpacks/${n}`).join(', ')} and dist/rbp.js`);
