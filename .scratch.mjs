// ../../tmp/try1.ts
import path3 from "node:path";

// test/helpers/rbp.ts
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { execa } from "execa";
var ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
var RBP = path.join(ROOT, "dist", "rbp.js");
var FIXTURES = path.join(ROOT, "fixtures");
function tmpDir(prefix = "rbp-test-") {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}
function copyFixture(name2) {
  const dst = path.join(tmpDir(), name2);
  fs.cpSync(path.join(FIXTURES, name2), dst, { recursive: true });
  return dst;
}

// test/reference-lifecycle/lifecycle.ts
import fs2 from "node:fs";
import os2 from "node:os";
import path2 from "node:path";
import { execa as execa2 } from "execa";
import { parse } from "smol-toml";
var PLATFORM_API = "0.13";
var VERSION = "0.20.8";
function lifecycleDir() {
  const tool = process.env.RBP_TOOL_LIFECYCLE;
  const dir = tool ? path2.dirname(tool) : path2.join(process.env.RBP_TOOLS_CACHE ?? path2.join(os2.homedir(), ".cache", "rbp-tools"), "lifecycle", VERSION);
  return fs2.existsSync(path2.join(dir, "detector")) && fs2.existsSync(path2.join(dir, "launcher")) ? dir : void 0;
}
function lc() {
  const dir = lifecycleDir();
  if (!dir) throw new Error("the reference lifecycle is missing");
  return dir;
}
function escapeId(id) {
  return id.replaceAll("/", "_");
}
function descriptor(dir) {
  const t = parse(fs2.readFileSync(path2.join(dir, "buildpack.toml"), "utf8"));
  return t.buildpack;
}
function writeEnvDir(dir, env) {
  fs2.mkdirSync(dir, { recursive: true });
  for (const [k, v] of Object.entries(env)) fs2.writeFileSync(path2.join(dir, k), v);
}
function makeLayout(app2, opts) {
  const root = tmpDir("rbp-reflc-");
  const l2 = {
    root,
    app: app2,
    layers: path2.join(root, "layers"),
    platform: path2.join(root, "platform"),
    buildpacks: path2.join(root, "buildpacks"),
    buildConfig: path2.join(root, "build-config"),
    order: path2.join(root, "order.toml"),
    group: path2.join(root, "layers", "group.toml"),
    plan: path2.join(root, "layers", "plan.toml")
  };
  fs2.mkdirSync(l2.layers, { recursive: true });
  writeEnvDir(path2.join(l2.platform, "env"), opts.userEnv ?? {});
  writeEnvDir(path2.join(l2.buildConfig, "env"), opts.operatorEnv ?? {});
  for (const b of opts.bindings ?? []) {
    fs2.mkdirSync(path2.join(l2.platform, "bindings"), { recursive: true });
    fs2.symlinkSync(path2.resolve(b), path2.join(l2.platform, "bindings", path2.basename(b)));
  }
  for (const dir of opts.buildpacks) {
    const d = descriptor(dir);
    const at = path2.join(l2.buildpacks, escapeId(d.id), d.version);
    if (fs2.existsSync(at)) continue;
    fs2.mkdirSync(path2.dirname(at), { recursive: true });
    fs2.symlinkSync(path2.resolve(dir), at);
  }
  const groups = opts.order ?? [opts.buildpacks.map((dir) => ({ dir }))];
  const toml = groups.map((g) => ["[[order]]", ...g.flatMap((e) => {
    const d = descriptor(e.dir);
    return ["[[order.group]]", `id = ${JSON.stringify(d.id)}`, `version = ${JSON.stringify(d.version)}`, ...e.optional ? ["optional = true"] : []];
  })].join("\n")).join("\n\n");
  fs2.writeFileSync(l2.order, `${toml}
`);
  return l2;
}
function phaseEnv(l2, extra = {}) {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/root", CNB_PLATFORM_API: PLATFORM_API, CNB_BUILD_CONFIG_DIR: l2.buildConfig, CNB_NO_COLOR: "true", ...extra };
}
function unprivileged(argv) {
  return process.getuid?.() === 0 ? ["unshare", "--user", "--map-user=1000", "--map-group=1000", ...argv] : argv;
}
async function phase(name2, l2, flags, extraEnv = {}) {
  const [cmd, ...args] = unprivileged([path2.join(lc(), name2), ...flags]);
  const r2 = await execa2(cmd, args, { reject: false, all: true, env: phaseEnv(l2, extraEnv), extendEnv: false, cwd: l2.root });
  return { code: r2.exitCode ?? -1, output: String(r2.all ?? "") };
}
var common = (l2) => ["-app", l2.app, "-layers", l2.layers, "-platform", l2.platform, "-buildpacks", l2.buildpacks, "-group", l2.group, "-plan", l2.plan, "-log-level", "debug"];
async function detector(l2, extraEnv = {}) {
  const r2 = await phase("detector", l2, [...common(l2), "-order", l2.order], extraEnv);
  if (r2.code !== 0) return r2;
  const group = parse(fs2.readFileSync(l2.group, "utf8")).group;
  const plan = fs2.existsSync(l2.plan) ? parse(fs2.readFileSync(l2.plan, "utf8")) : {};
  return { ...r2, group, plan };
}
async function builder(l2, extraEnv = {}) {
  const r2 = await phase("builder", l2, common(l2), extraEnv);
  const file = path2.join(l2.layers, "config", "metadata.toml");
  if (r2.code !== 0 || !fs2.existsSync(file)) return r2;
  return { ...r2, metadata: parse(fs2.readFileSync(file, "utf8")) };
}
async function detectAndBuild(l2, extraEnv = {}) {
  const detect = await detector(l2, extraEnv);
  if (detect.code !== 0) return { ...detect, detect };
  const b = await builder(l2, extraEnv);
  return { ...b, output: `${detect.output}
${b.output}`, detect };
}
function launcherCommand(l2, o = {}) {
  const env = { PATH: "/usr/local/bin:/usr/bin:/bin", CNB_PLATFORM_API: PLATFORM_API, CNB_LAYERS_DIR: l2.layers, CNB_APP_DIR: l2.app, ...o.env };
  if (o.direct) return { argv: [path2.join(lc(), "launcher"), "--", ...o.args ?? []], env };
  const md = parse(fs2.readFileSync(path2.join(l2.layers, "config", "metadata.toml"), "utf8"));
  const type = o.type ?? md["buildpack-default-process-type"];
  if (!type) throw new Error("no default process: metadata.toml names no buildpack-default-process-type");
  const procDir = path2.join(l2.root, "cnb", "process");
  fs2.mkdirSync(procDir, { recursive: true });
  const link = path2.join(procDir, type);
  if (!fs2.existsSync(link)) fs2.symlinkSync(path2.join(lc(), "launcher"), link);
  return { argv: [link, ...o.args ?? []], env };
}

// ../../tmp/try1.ts
var D = "/work/wt-lc/dist/buildpacks";
var bps = ["node", "static", "phpserver"].map((n) => path3.join(D, n));
var name = process.argv[2];
var app = copyFixture(name);
var l = makeLayout(app, { buildpacks: bps, order: bps.map((dir) => [{ dir }]), operatorEnv: { RBP_TOOL_CADDY: process.env.RBP_TOOL_CADDY ?? "/usr/bin/caddy", RBP_TOOL_PHP: "/usr/bin/php", RBP_TOOL_COMPOSER: "/usr/bin/composer" }, userEnv: JSON.parse(process.argv[3] ?? "{}") });
var r = await detectAndBuild(l);
console.log(r.output.slice(-6e3));
console.log("code", r.code, JSON.stringify(r.detect.group), JSON.stringify(r.metadata));
if (r.code === 0) console.log(JSON.stringify(launcherCommand(l)));
