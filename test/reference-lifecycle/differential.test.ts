/**
 * rbp against the reference lifecycle, on the same inputs (part 3): the scripted shell
 * buildpacks of fixtures/buildpacks exercising each lifecycle rule of cnb-spec.md. Each scenario runs
 * through `rbp` (detect, build, run) and through the lifecycle's detector, builder and launcher; the
 * two observations must be equal: detect exit code, group and plan; build exit code; launch layers
 * and their [types]; the environment each later buildpack saw (dumped by its build script); the
 * processes and default of metadata.toml; the launched process's output (its environment and
 * argv) and exit code. Deliberate differences are listed in the README ("Under the reference
 * lifecycle") and kept out of the comparison in differential.ts, with the reason.
 * A rebuild is compared too: the lifecycle side runs analyzer, detector, restorer, builder and
 * exporter twice (an OCI layout holding the previous image, a volume cache); rbp builds twice into
 * the same OUT. What the second build's buildpack finds restored, and what is exported, must agree.
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES, ROOT } from '../helpers/rbp.ts';
import { SYSTEM_COMPOSER as COMPOSER, makeMirror, SYSTEM_PHP as PHP } from '../phpserver/support.ts';
import { bp, editedBuildpack, launchToml, passWith, scriptedApp } from '../lifecycle/helpers.ts';
import { both, DUMP_ENV, layer, rebuildViaLifecycle, rebuildViaRbp, same, SHOW_PROCESS, type Scenario } from './differential.ts';
import { skipWithoutLifecycle } from './lifecycle.ts';
import { readFixture } from '../helpers/fixture-spec.ts';

const skip = skipWithoutLifecycle('rbp vs the reference lifecycle');

describe.skipIf(skip)('rbp and the reference lifecycle agree', () => {
  it('env files: suffixes, delimiters, build vs launch vs cache layers, layer roots, user and run-time variables', async () => {
    const app = scriptedApp({
      'a/detect': passWith(),
      'b/detect': passWith(),
      'c/detect': passWith(),
      'a/build': [
        DUMP_ENV('a.env'),
        layer('tools', 'build = true\nlaunch = true', {
          'env/OVR': 'a-ovr',
          'env/DEF.default': 'a-def',
          'env/GLUE.append': 'a-glue',
          'env/LIST.prepend': 'a-list',
          'env/LIST.delim': ':',
          'env/ODD.weird': 'ignored',
          'env.build/BONLY': 'a-build',
          'env.launch/LONLY': 'a-launch',
          'env.launch/web/WEBONLY': 'a-web',
          'env.launch/worker/WORKERONLY': 'a-worker',
          'bin/tool-a+x': '#!/bin/sh\necho tool-a',
          'lib/.keep': '',
          'include/.keep': '',
          'pkgconfig/.keep': '',
        }),
        layer('blayer', 'build = true', { 'env/BUILDLAYER': 'b', 'bin/.keep': '' }),
        layer('llayer', 'launch = true', { 'env/LAUNCHLAYER': 'l', 'bin/.keep': '' }),
        layer('clayer', 'cache = true', { 'env/CACHELAYER': 'c', 'bin/.keep': '' }),
        layer('untyped', '', { 'env/UNTYPED': 'u' }),
        layer('alpha', 'build = true\nlaunch = true', { 'env/OVR': 'alpha-ovr', 'env/GLUE.append': 'alpha-glue', 'bin/.keep': '' }),
      ].join('\n'),
      'b/build': [
        DUMP_ENV('b.env'),
        layer('zz', 'build = true\nlaunch = true', {
          'env/OVR': 'b-ovr',
          'env/DEF.default': 'b-def',
          'env/GLUE.append': 'b-glue',
          'env/LIST.prepend': 'b-list',
          'env/LIST.delim': ':',
          'env.launch/OVR.override': 'b-launch-ovr',
          'bin/.keep': '',
        }),
        launchToml(SHOW_PROCESS('web', 'default = true')),
      ].join('\n'),
      'c/build': DUMP_ENV('c.env'),
    });
    const r = await both({
      buildpacks: [bp('a'), bp('b'), bp('c')],
      app,
      userEnv: { PATH: '/opt/user/bin', USERVAR: 'from-user', OVR: 'user-ovr', DEF: 'user-def' },
      runEnv: { RUNVAR: 'run', DEF: 'run-def', OVR: 'run-ovr', GLUE: 'run-glue' },
      launch: {},
    });
    expect(r.ref.build?.code, r.ref.log).toBe(0);
    expect(r.ref.build?.observed['b.env']).toMatch(/^CNB_TARGET_DISTRO_NAME=\S+$/m);
    expect(r.ref.build?.observed['b.env']).toContain('LIST=a-list\n');
    same(r);
  });

  it('processes: later buildpacks win a type, the last default wins, user args replace args, working-dir', async () => {
    const app = scriptedApp(
      {
        'a/detect': passWith(),
        'b/detect': passWith(),
        'a/build': launchToml(`${SHOW_PROCESS('web', 'default = true')}\n${SHOW_PROCESS('worker')}\n${SHOW_PROCESS('alone', 'working-dir = "sub"')}`),
        'b/build': launchToml(`${SHOW_PROCESS('worker', 'default = true')}\n${SHOW_PROCESS('extra')}`),
      },
      { 'sub/.keep': '' },
    );
    const s: Scenario = { buildpacks: [bp('a'), bp('b')], app, launch: { args: ['u1', 'u 2'] } };
    same(await both(s));
    same(await both({ ...s, launch: { type: 'alone' } }));
  });

  it('a later non-default redefinition of the default type clears the default', async () => {
    const app = scriptedApp({
      'a/detect': passWith(),
      'b/detect': passWith(),
      'a/build': launchToml(SHOW_PROCESS('web', 'default = true')),
      'b/build': launchToml(SHOW_PROCESS('web')),
    });
    same(await both({ buildpacks: [bp('a'), bp('b')], app, launch: { type: 'web' } }));
  });

  it('exec.d: programs of launch layers set variables through fd 3, generic and per process; what they print goes to stdout', async () => {
    const app = scriptedApp({
      'a/detect': passWith(),
      'a/build': [
        layer('hooks', 'launch = true', {
          'exec.d/10-set+x': '#!/bin/sh\necho "exec.d 10-set ran"\necho "EXECD = \\"generic-$FROM_ENV\\"" >&3\necho "OVERRIDDEN = \\"by-exec-d\\"" >&3',
          'exec.d/web/20-web+x': '#!/bin/sh\necho "EXECD_WEB = \\"web\\"" >&3',
          'exec.d/other/30-other+x': '#!/bin/sh\necho "EXECD_OTHER = \\"other\\"" >&3',
          'env/FROM_ENV': 'env-file',
          'env/OVERRIDDEN': 'by-env-file',
        }),
        layer('notlaunch', 'build = true', { 'exec.d/99-never+x': '#!/bin/sh\necho "NEVER = \\"x\\"" >&3' }),
        launchToml(SHOW_PROCESS('web', 'default = true')),
      ].join('\n'),
    });
    const r = await both({ buildpacks: [bp('a')], app, launch: {} });
    expect(r.ref.launch?.stdout).toContain('EXECD=generic-env-file');
    expect(r.ref.launch?.stdout).toMatch(/^exec\.d 10-set ran$/m);
    same(r);
  });

  it('the plan: provides and requires with [[or]], metadata, unmet entries passed on', async () => {
    const app = scriptedApp({
      'a/detect': passWith('[[provides]]\nname = "node"\n[[or]]\n[[or.provides]]\nname = "python"'),
      'b/detect': passWith('[[provides]]\nname = "node"'),
      'c/detect': passWith('[[requires]]\nname = "node"\n[requires.metadata]\nversion = "22"\n[[requires]]\nname = "node"\n[requires.metadata]\nagain = true'),
      'a/build': `mkdir -p .observed; cat "$CNB_BP_PLAN_PATH" > .observed/a.plan\nprintf '[[unmet]]\\nname = "node"\\n' > "$CNB_LAYERS_DIR/build.toml"`,
      'b/build': 'mkdir -p .observed; cat "$CNB_BP_PLAN_PATH" > .observed/b.plan',
      'c/build': 'mkdir -p .observed; cat "$CNB_BP_PLAN_PATH" > .observed/c.plan',
    });
    const r = await both({ buildpacks: [bp('a'), bp('b'), bp('c')], app });
    expect(r.ref.detect.code, r.ref.log).toBe(0);
    same(r);
  });

  it('clear-env: the user variables do not reach that buildpack; operator-free build env otherwise equal', async () => {
    const cleared = editedBuildpack('a', (t) => t.replace('[buildpack]', '[buildpack]\nclear-env = true'));
    const app = scriptedApp({ 'a/detect': passWith(), 'b/detect': passWith(), 'a/build': DUMP_ENV('a.env'), 'b/build': DUMP_ENV('b.env') });
    same(await both({ buildpacks: [cleared, bp('b')], app, userEnv: { USERVAR: 'x', PATH: '/opt/user/bin' } }));
  });

  it.each([
    ['every buildpack fails detect: 20', { 'a/detect': 'exit 100', 'b/detect': 'exit 100' }],
    ['a buildpack errors in detect: 21', { 'a/detect': 'exit 3', 'b/detect': 'exit 100' }],
    ['a required buildpack fails: 20', { 'a/detect': passWith(), 'b/detect': 'exit 100' }],
    ['provides with no later requires fails the group: 20', { 'a/detect': passWith('[[provides]]\nname = "x"'), 'b/detect': passWith() }],
    [
      'requires with no earlier provides fails the group: 20',
      { 'a/detect': passWith('[[requires]]\nname = "x"'), 'b/detect': passWith('[[provides]]\nname = "x"') },
    ],
    ['a failing build: 51', { 'a/detect': passWith(), 'b/detect': passWith(), 'b/build': 'exit 9' }],
    [
      'a launch.toml with a string command: build error',
      { 'a/detect': passWith(), 'b/detect': passWith(), 'b/build': launchToml('[[processes]]\ntype = "web"\ncommand = "echo hi"') },
    ],
    [
      'flags at the top of a layer toml: build error',
      { 'a/detect': passWith(), 'b/detect': passWith(), 'b/build': 'mkdir -p "$CNB_LAYERS_DIR/l"; printf \'launch = true\\n\' > "$CNB_LAYERS_DIR/l.toml"' },
    ],
    [
      'two defaults in one buildpack: build error',
      {
        'a/detect': passWith(),
        'b/detect': passWith(),
        'b/build': launchToml(`${SHOW_PROCESS('one', 'default = true')}\n${SHOW_PROCESS('two', 'default = true')}`),
      },
    ],
  ])('exit codes: %s', async (_what, scripts) => {
    same(await both({ buildpacks: [bp('a'), bp('b')], app: scriptedApp(scripts) }));
  });

  it('a rebuild: what is restored ([types] never; cache layers with contents; launch-only metadata only), and reuse of a launch layer by its toml alone', async () => {
    // Restored layers as the second build finds them: folders with their files, each .toml parsed.
    const observe = [
      'mkdir -p .observed',
      'cd "$CNB_LAYERS_DIR"',
      'for f in $(ls -A | sort); do if [ -d "$f" ]; then echo "$f/: $(ls -A "$f" | sort | tr "\\n" " ")"; else echo "$f"; fi; done > "$OLDPWD/.observed/restored"',
      'for f in *.toml; do [ -f "$f" ] && cp "$f" "$OLDPWD/.observed/restored-$f"; done',
      'cd "$OLDPWD"',
    ].join('\n');
    const withMeta = (name: string, types: string) =>
      `${layer(name, types, { file: name })}\nprintf '[metadata]\\nv = "1"\\n' >> "$CNB_LAYERS_DIR/${name}.toml"`;
    const first = scriptedApp({
      'a/detect': passWith(),
      'a/build': [
        withMeta('cached', 'cache = true'),
        withMeta('both', 'launch = true\ncache = true'),
        withMeta('launchonly', 'launch = true'),
        withMeta('buildonly', 'build = true'),
        withMeta('launchbuild', 'launch = true\nbuild = true'),
        'printf \'[metadata]\\nkept = "yes"\\n\' > "$CNB_LAYERS_DIR/store.toml"',
      ].join('\n'),
    });
    const second = scriptedApp({
      'a/detect': passWith(),
      'a/build': [
        observe,
        // Reuse: the cached layers by rewriting their types; launchonly by its toml alone (no folder).
        'printf \'[types]\\ncache = true\\n\' > "$CNB_LAYERS_DIR/cached.toml"',
        'printf \'[types]\\nlaunch = true\\ncache = true\\n\' > "$CNB_LAYERS_DIR/both.toml"',
        'printf \'[types]\\nlaunch = true\\n[metadata]\\nv = "1"\\n\' > "$CNB_LAYERS_DIR/launchonly.toml"',
      ].join('\n'),
    });
    const [ours, ref] = await Promise.all([
      rebuildViaRbp({ buildpacks: [bp('a')], first, second }),
      rebuildViaLifecycle({ buildpacks: [bp('a')], first, second }),
    ]);
    expect(ref.code, ref.log).toBe(0);
    // The lifecycle's own answer, which rbp must match: cache layers come back with their files,
    // launch-only ones as metadata alone, build-only ones not at all; no restored toml has [types].
    expect(ref.observed.restored).toContain('cached/: file');
    expect(ref.observed.restored).not.toContain('launchonly/');
    expect(ref.observed.restored).not.toContain('buildonly');
    expect(ref.observed['restored-launchonly.toml']).toEqual({ metadata: { v: '1' } });
    expect(ref.exported).toContain('test_a/launchonly');
    const { log: l1, ...a } = ours;
    const { log: l2, ...b } = ref;
    expect(a, `---- rbp:\n${l1}\n---- lifecycle:\n${l2}`).toEqual(b);
  });

  it('the process exit status is the launcher’s', async () => {
    const app = scriptedApp({ 'a/detect': passWith(), 'a/build': launchToml(SHOW_PROCESS('web', 'default = true')) });
    const r = await both({ buildpacks: [bp('a')], app, runEnv: { EXIT: '7' }, launch: {} });
    expect(r.ref.launch?.code).toBe(7);
    same(r);
  });
});

/** Trust settings of this machine and the operator's tools, as runtimes.test.ts passes them. */
const TRUST = Object.fromEntries(['NODE_EXTRA_CA_CERTS', 'SSL_CERT_FILE', 'SSL_CERT_DIR'].flatMap((k) => (process.env[k] ? [[k, process.env[k]]] : [])));
const CADDY = process.env.RBP_TOOL_CADDY ?? (fs.existsSync('/usr/bin/caddy') ? '/usr/bin/caddy' : undefined);
const DIST = path.join(ROOT, 'dist', 'buildpacks');

describe.skipIf(skip)('our runtime buildpacks: rbp and the reference lifecycle build the same', () => {
  // One fixture per family: the detect of every fixture is compared in runtimes.test.ts.
  it.each([
    // rbp without --image uses operator tools in place; the lifecycle is told the same, or it copies them into a layer.
    ['static', 'static-caddy-forced', () => (CADDY ? { RBP_TOOL_CADDY: CADDY, RBP_OPERATOR_TOOLS: 'in-place' } : undefined)],
    ['node', 'node-npm-lock', () => ({})],
    ['phpserver', 'php-task', () => ({ RBP_TOOL_PHP: PHP, RBP_TOOL_COMPOSER: COMPOSER, RBP_DEPENDENCY_MIRROR: makeMirror() })],
  ] as const)(
    '%s: %s — group, plan, launch layers and their types, processes',
    async (bpName, fixture, tools) => {
      const operator = tools();
      if (!operator) {
        console.warn(`${fixture}: no caddy (RBP_TOOL_CADDY or /usr/bin/caddy): not compared`);
        return;
      }
      const env = readFixture(fixture).cases[0]?.env ?? {};
      const r = await both({ buildpacks: [path.join(DIST, bpName)], app: path.join(FIXTURES, fixture), userEnv: env, operatorEnv: { ...TRUST, ...operator } });
      expect(r.ref.build?.code, r.ref.log).toBe(0);
      expect(r.ref.build?.processes.length).toBeGreaterThan(0);
      same(r);
    },
    600_000,
  );
});
