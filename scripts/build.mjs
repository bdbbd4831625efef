// Bundles every buildpacks/<name>/ into a complete CNB buildpack directory dist/buildpacks/<name>/
// and the CLI into dist/rbp.js. A buildpack directory holds:
//   buildpack.toml
//   bin/detect, bin/build   POSIX sh bootstraps (see BOOTSTRAP): a build image needs no Node.js
//   lib/detect.cjs, lib/build.cjs   the bundled code they run (one self-contained file each)
//   bin/launch              the launch entrypoint, run as `<node> <layer>/bin/launch` (lib/launch/entry.ts)
//   node/bin/node           only when packaged with `--with-node[=PATH]`: the Node.js the bootstraps use
//
//   node scripts/build.mjs                  # bootstraps use node >= 20 from PATH
//   node scripts/build.mjs --with-node      # also carry this Node.js (process.execPath) in each buildpack
//   node scripts/build.mjs --with-node=/path/to/node --out DIR
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const withNodeArg = args.find((a) => a === '--with-node' || a.startsWith('--with-node='));
const carriedNode = withNodeArg ? (withNodeArg.includes('=') ? path.resolve(withNodeArg.split('=')[1]) : process.execPath) : undefined;
const outArg = args.indexOf('--out');
const finalDist = outArg >= 0 ? path.resolve(args[outArg + 1]) : path.join(root, 'dist');
// Built aside and swapped in, so tests running against dist/ never see half a build.
const dist = path.join(path.dirname(finalDist), `.dist-${process.pid}`);
const ENTRYPOINTS = ['detect', 'build', 'launch'];
const MIN_NODE_MAJOR = 20;

// bin/detect and bin/build: the lifecycle runs them with the build image's PATH, which may hold no
// Node.js (a stock CNB build image has none). The bootstrap takes the Node.js carried in the
// buildpack (node/bin/node, put there by --with-node: the packager chose it, so it wins), else a
// `node` >= 20 from PATH, else fails with one clear message. It execs, so exit codes (0, 100, other)
// and signals are the bundled code's own. Plain POSIX sh: dash and busybox run it.
const BOOTSTRAP = (entry) => `#!/bin/sh
# ${entry} bootstrap (scripts/build.mjs): runs lib/${entry}.cjs on Node.js >= ${MIN_NODE_MAJOR}.
bp=\${CNB_BUILDPACK_DIR:-$(cd "$(dirname "$0")/.." && pwd)}
node="$bp/node/bin/node"
if [ ! -x "$node" ]; then
  node=$(command -v node || true)
  # \`node --version\` answers before Node.js sets up its JavaScript: a version check costs no second start.
  major=$([ -n "$node" ] && "$node" --version 2>/dev/null)
  major=\${major#v}
  major=\${major%%.*}
  case $major in '' | *[!0-9]*) major=0 ;; esac
  if [ "$major" -lt ${MIN_NODE_MAJOR} ]; then
    echo "ERROR $(basename "$bp"): bin/${entry} needs Node.js >= ${MIN_NODE_MAJOR}: none in this buildpack (node/bin/node) and \${node:-no node} on PATH\${node:+ is $("$node" --version 2>/dev/null)}" >&2
    echo "Fix: package the buildpack with Node.js (npm run build -- --with-node), or put node >= ${MIN_NODE_MAJOR} on the build image's PATH" >&2
    exit 1
  fi
fi
exec "$node" "$bp/lib/${entry}.cjs" "$@"
`;

// lib/detect.cjs: src/detect.ts exports the detect function. Run as a program (bin/detect), the
// bundle is bin/detect's program (runDetect: process env, cwd, streams, exit code); loaded with
// require() it exports `detectExit(env, cwd)`, the same code, which rbp runs in-process for its own
// buildpacks (lib/platform/detect.ts) to spare a Node.js start per buildpack.
const detectEntry = (file) => ({
  sourcefile: 'detect-entry.cjs',
  resolveDir: path.dirname(file),
  loader: 'js',
  contents: `const { detectExit, runDetect } = require(${JSON.stringify(path.join(root, 'lib', 'cnb', 'context.ts'))});
const detect = require(${JSON.stringify(file)}).default;
if (require.main === module) runDetect(detect);
else module.exports = { rbpDetectApi: 1, detectExit: (env, cwd) => detectExit(detect, env, cwd) };
`,
});

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
    if (carriedNode) {
      fs.mkdirSync(path.join(out, 'node', 'bin'), { recursive: true });
      fs.copyFileSync(carriedNode, path.join(out, 'node', 'bin', 'node'));
      fs.chmodSync(path.join(out, 'node', 'bin', 'node'), 0o755);
    }
    return ENTRYPOINTS.map(async (entry) => {
      const file = path.join(src, 'src', `${entry}.ts`);
      if (!fs.existsSync(file)) throw new Error(`${name}: src/${entry}.ts is missing`);
      // bin/launch stays one JS file: the build copies it into a launch layer and runs it with a chosen node.
      const bootstrapped = entry !== 'launch';
      const outfile = bootstrapped ? path.join(out, 'lib', `${entry}.cjs`) : path.join(out, 'bin', entry);
      const input = entry === 'detect' ? { stdin: detectEntry(file) } : { entryPoints: [file] };
      await esbuild.build({ ...common, ...input, outfile, format: 'cjs', ...(bootstrapped ? {} : { banner: { js: '#!/usr/bin/env node' } }) });
      if (bootstrapped) fs.writeFileSync(path.join(out, 'bin', entry), BOOTSTRAP(entry), { mode: 0o755 });
      else fs.chmodSync(outfile, 0o755);
    });
  }),
);

const { version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
await esbuild.build({
  ...common,
  define: { __RBP_VERSION__: JSON.stringify(version) },
  entryPoints: { rbp: path.join(root, 'scripts', 'rbp.ts') },
  // Split at the CLI's dynamic imports: a command loads only its own code (rbp detect runs on every
  // build). The chunks sit beside rbp.js, so import.meta.url names the same folder in each.
  outdir: dist,
  splitting: true,
  chunkNames: 'rbp-[hash]',
  format: 'esm',
  // `node --`: Node.js 20 itself takes an `--env-file` anywhere on its command line (and exits when
  // the file is missing) unless `--` ends its own options; rbp's --env-file is rbp's to read.
  banner: { js: "#!/usr/bin/env -S node --\nimport { createRequire as __rbpRequire } from 'node:module';\nconst require = __rbpRequire(import.meta.url);" },
});
fs.chmodSync(path.join(dist, 'rbp.js'), 0o755);
const old = `${finalDist}.old-${process.pid}`;
if (fs.existsSync(finalDist)) fs.renameSync(finalDist, old);
fs.renameSync(dist, finalDist);
fs.rmSync(old, { recursive: true, force: true });
const shown = path.relative(root, finalDist) || finalDist;
// Detect runs on every build, each time a Node.js start plus this file's load: its size is watched.
const chunks = fs.readdirSync(finalDist).filter((f) => /^rbp-.*\.js$/.test(f));
const kib = (f) => `${(fs.statSync(f).size / 1024).toFixed(1)} KiB`;
console.log(`detect bundles: ${names.map((n) => `${n} ${kib(path.join(finalDist, 'buildpacks', n, 'lib', 'detect.cjs'))}`).join(', ')}; rbp.js ${kib(path.join(finalDist, 'rbp.js'))} (+ ${chunks.length} chunks loaded on demand)`);
console.log(`built ${names.map((n) => `${shown}/buildpacks/${n}`).join(', ')} and ${shown}/rbp.js${carriedNode ? ` (each buildpack carries ${carriedNode})` : ''}`);
