/**
 * rbp against the reference lifecycle: what differs by Buildpack API, buildpack.toml's
 * acceptance rules, project.toml's include/exclude before detect, and what a rebuild restores (layer
 * SBOMs; nothing with --clear-cache). Each case runs the same buildpacks on the same app through rbp
 * and through the lifecycle's phases (differential.ts) and compares what both observed.
 *
 * The buildpacks: fixtures/buildpacks/api-0.7, api-0.8, api-0.9, a (0.10), api-0.11 and api-0.12 (a
 * version the lifecycle does not run), all scripted by the app's `.bp/<name>/<phase>` scripts.
 */
import { describe, expect, it } from 'vitest';
import { bp, editedBuildpack, launchToml, passWith, scriptedApp } from '../lifecycle/helpers.ts';
import { both, layer, rebuildViaLifecycle, rebuildViaRbp, same, SHOW_PROCESS } from './differential.ts';
import { skipWithoutLifecycle } from './lifecycle.ts';

const skip = skipWithoutLifecycle('rbp vs the reference lifecycle: Buildpack APIs');

/**
 * The environment of a detect or build, with the CNB_* paths that name each side's own folders
 * shown as set (`<path>`), so that which of them an API gets is compared; and the number of
 * positional arguments.
 */
const DUMP = (file: string) =>
  `mkdir -p .observed && { echo "argc=$#"; env | sed -E 's/^(CNB_(BP_PLAN_PATH|BUILD_PLAN_PATH|BUILDPACK_DIR|LAYERS_DIR|PLATFORM_DIR))=.*/\\1=<path>/' | grep -v -E '^(PWD=|OLDPWD=|SHLVL=|_=)' | sort; } > .observed/${file}`;

/** launch.toml for a 0.7 buildpack, whose layers folder is its first argument. */
const launchToml07 = (toml: string) => `cat > "$1/launch.toml" <<'TOML'\n${toml}\nTOML`;

describe.skipIf(skip)('rbp and the reference lifecycle agree, Buildpack API by API', () => {
  it('0.7, 0.8, 0.9, 0.10 and 0.11 in one group: CNB_* by API, string commands, bash processes with profile scripts, working-dir, user arguments', async () => {
    const app = scriptedApp(
      {
        // 0.7 reads its plan path from its arguments; it provides what 0.11 requires.
        'api-0.7/detect': `${DUMP('detect-0.7.env')}\nprintf '[[provides]]\\nname = "old"\\n' > "$2"`,
        'api-0.8/detect': `${DUMP('detect-0.8.env')}\n${passWith()}`,
        'api-0.9/detect': `${DUMP('detect-0.9.env')}\n${passWith()}`,
        'a/detect': `${DUMP('detect-0.10.env')}\n${passWith()}`,
        'api-0.11/detect': `${DUMP('detect-0.11.env')}\n${passWith('[[requires]]\nname = "old"\n[requires.metadata]\nfrom = "0.11"')}`,
        'api-0.7/build': [
          DUMP('build-0.7.env'),
          'cat "$3" > .observed/api-0.7.plan',
          layer(
            'profiles',
            'launch = true',
            { 'profile.d/10-greet.sh': 'export GREETING="hello from profile.d"', 'profile.d/v07-shell/20-only.sh': 'export ONLY_SHELL=yes' },
            '$1',
          ),
          launchToml07(
            [
              '[[processes]]',
              'type = "v07-shell"',
              'command = "echo greeting=$GREETING only=${ONLY_SHELL:-no} app=${APP_PROFILE:-no}; pwd"',
              'working-dir = "sub"',
              '[[processes]]',
              'type = "v07-direct"',
              'command = "printf"',
              'args = ["[%s]"]',
              'direct = true',
              '[[processes]]',
              'type = "v07-tokens"',
              'command = "printf"',
              'args = ["<%s>", "$GREETING", "two words"]',
            ].join('\n'),
          ),
        ].join('\n'),
        'api-0.8/build': [
          DUMP('build-0.8.env'),
          launchToml(
            [
              '[[processes]]',
              'type = "v08-shell"',
              'command = "echo"',
              'args = ["from-0.8", "$GREETING"]',
              'working-dir = "sub"',
              '[[processes]]',
              'type = "v08-cwd"',
              'command = "pwd"',
              'working-dir = "sub"',
            ].join('\n'),
          ),
        ].join('\n'),
        'api-0.9/build': [
          DUMP('build-0.9.env'),
          launchToml(
            [
              '[[processes]]',
              'type = "v09"',
              'command = ["printf", "%s|"]',
              'args = ["d1", "d2"]',
              '[[processes]]',
              'type = "v09-single"',
              'command = ["echo"]',
              'args = ["default"]',
            ].join('\n'),
          ),
        ].join('\n'),
        'a/build': [DUMP('build-0.10.env'), launchToml(SHOW_PROCESS('web', 'default = true'))].join('\n'),
        'api-0.11/build': [DUMP('build-0.11.env'), 'cat "$CNB_BP_PLAN_PATH" > .observed/api-0.11.plan'].join('\n'),
      },
      { '.profile': 'export APP_PROFILE=yes\n', 'sub/.keep': '' },
    );
    const r = await both({
      buildpacks: [bp('api-0.7'), bp('api-0.8'), bp('api-0.9'), bp('a'), bp('api-0.11')],
      app,
      launches: [
        { type: 'v07-shell' },
        { type: 'v07-direct', args: ['a b'] },
        { type: 'v07-tokens', args: ['u1', '$HOME'] },
        { type: 'v08-shell', args: ['u'] },
        { type: 'v08-cwd' },
        { type: 'v09', args: ['u1'] },
        { type: 'v09-single', args: ['u'] },
      ],
    });
    // The lifecycle's own answers, which rbp must match.
    const obs = r.ref.build?.observed ?? {};
    expect(r.ref.build?.code, r.ref.log).toBe(0);
    expect(obs['detect-0.7.env']).not.toMatch(/^CNB_(PLATFORM_DIR|BUILD_PLAN_PATH)=/m);
    expect(obs['build-0.7.env']).not.toMatch(/^CNB_(PLATFORM_DIR|BP_PLAN_PATH|LAYERS_DIR)=/m);
    expect(obs['build-0.8.env']).toMatch(/^CNB_LAYERS_DIR=<path>$/m);
    expect(obs['build-0.9.env']).not.toMatch(/^CNB_TARGET_OS=/m);
    expect(obs['build-0.11.env']).toMatch(/^CNB_TARGET_OS=linux$/m);
    expect(r.ref.launches?.[0]?.stdout).toBe('greeting=hello from profile.d only=yes app=yes\n<app>');
    expect(r.ref.launches?.[1]?.stdout).toBe('[a b]');
    expect(r.ref.launches?.[6]?.stdout).toBe('u');
    same(r);
  });

  it.each([
    ['0.12, newer than the lifecycle runs: 12', () => bp('api-0.12')],
    ['0.1, older than the lifecycle runs: 12', () => editedBuildpack('a', (t) => t.replace('api = "0.10"', 'api = "0.1"'))],
    ['an api that is not a version: 12', () => editedBuildpack('a', (t) => t.replace('api = "0.10"', 'api = "ten"'))],
    ['no api: 12', () => editedBuildpack('a', (t) => t.replace('api = "0.10"', ''))],
    ['an api that is a number, not a string: 1', () => editedBuildpack('a', (t) => t.replace('api = "0.10"', 'api = 0.10'))],
    ['buildpack.toml that is not TOML: 1', () => editedBuildpack('a', (t) => t.replace('name = ', 'name = "unterminated\nx = '))],
    [
      '[[stacks]] io.buildpacks.stacks.bionic alone, on a machine that is not Ubuntu 18.04: 21',
      () =>
        editedBuildpack('a', (t) =>
          t.replace('api = "0.10"', 'api = "0.9"').replace(/\[\[targets\]\][^[]*/, '[[stacks]]\nid = "io.buildpacks.stacks.bionic"\n'),
        ),
    ],
  ])('buildpack.toml: %s', async (_what, dir) => {
    const app = scriptedApp({ 'a/detect': passWith() });
    const r = await both({ buildpacks: [dir()], app });
    expect(r.ref.detect.code, r.ref.log).not.toBe(0);
    same(r);
  });

  it('buildpack.toml: an id with _ is accepted, built and launched', async () => {
    const under = editedBuildpack('a', (t) => t.replace('id = "test/a"', 'id = "test/under_score"'));
    const app = scriptedApp({
      'a/detect': passWith(),
      'a/build': [layer('l', 'launch = true', { 'env/X': 'x' }), launchToml(SHOW_PROCESS('web', 'default = true'))].join('\n'),
    });
    const r = await both({ buildpacks: [under], app, launch: {} });
    expect(r.ref.build?.code, r.ref.log).toBe(0);
    expect(r.ref.build?.exported).toEqual(['test_under_score/l']);
    same(r);
  });
});

describe.skipIf(skip)('rbp and the reference lifecycle agree: project.toml include and exclude come before detect', () => {
  const DESCRIPTOR = (key: string, list: string[]) => `[_]\nschema-version = "0.2"\n[io.buildpacks]\n${key} = ${JSON.stringify(list)}\n`;

  it('exclude: a buildpack that needs an excluded file does not detect', async () => {
    const app = scriptedApp(
      { 'a/detect': `[ -f excluded.txt ] || exit 100\n${passWith()}` },
      { 'project.toml': DESCRIPTOR('exclude', ['excluded.txt']), 'excluded.txt': 'x' },
    );
    const r = await both({ buildpacks: [bp('a')], app });
    expect(r.ref.detect.code).toBe(20);
    same(r);
  });

  it('include: detect sees only the included files, and what it writes stays out of the source', async () => {
    const app = scriptedApp(
      {
        'a/detect': `[ -f kept.txt ] && [ ! -f dropped.txt ] || exit 100\necho written > detect-wrote.txt\n${passWith()}`,
        'a/build': 'mkdir -p .observed; find . -path ./.observed -prune -o -type f -print | sort > .observed/files',
      },
      { 'project.toml': DESCRIPTOR('include', ['.bp', 'kept.txt']), 'kept.txt': 'k', 'dropped.txt': 'd' },
    );
    const r = await both({ buildpacks: [bp('a')], app });
    expect(r.ref.detect.code, r.ref.log).toBe(0);
    expect(r.ref.build?.observed.files).toContain('./detect-wrote.txt');
    expect(r.ref.sourceChanged).toBe(false);
    same(r);
  });
});

describe.skipIf(skip)('rbp and the reference lifecycle agree on what a rebuild restores', () => {
  const withSbom = () => editedBuildpack('a', (t) => t.replace('[buildpack]', '[buildpack]\nsbom-formats = ["application/vnd.cyclonedx+json"]'));
  // Every kind of layer, each with its metadata and an SBOM; a buildpack-wide launch SBOM; store.toml.
  const layerWith = (name: string, types: string) =>
    `${layer(name, types, { file: name })}\nprintf '[metadata]\\nv = "1"\\n' >> "$CNB_LAYERS_DIR/${name}.toml"\nprintf '{"bomFormat":"CycloneDX","specVersion":"1.4","version":1,"components":[{"type":"library","name":"${name}"}]}' > "$CNB_LAYERS_DIR/${name}.sbom.cdx.json"`;
  const first = () =>
    scriptedApp({
      'a/detect': passWith(),
      'a/build': [
        layerWith('cached', 'cache = true'),
        layerWith('both', 'launch = true\ncache = true'),
        layerWith('launchonly', 'launch = true'),
        layerWith('buildonly', 'build = true'),
        layerWith('launchbuild', 'launch = true\nbuild = true'),
        'printf \'{"bomFormat":"CycloneDX","specVersion":"1.4","version":1,"components":[]}\' > "$CNB_LAYERS_DIR/launch.sbom.cdx.json"',
        'printf \'[metadata]\\nkept = "yes"\\n\' > "$CNB_LAYERS_DIR/store.toml"',
      ].join('\n'),
    });
  // What the second build finds: each file of its layers folder, and each restored SBOM's content.
  const second = () =>
    scriptedApp({
      'a/detect': passWith(),
      'a/build': [
        'mkdir -p .observed',
        '(cd "$CNB_LAYERS_DIR" && ls -A | sort) > .observed/restored',
        'for f in "$CNB_LAYERS_DIR"/*.sbom.cdx.json "$CNB_LAYERS_DIR"/store.toml; do [ -f "$f" ] && cp "$f" ".observed/restored-$(basename "$f")"; done; true',
      ].join('\n'),
    });

  it.each([
    ['layer SBOMs come back with the layers: the cache’s and the previous build’s launch ones', false],
    ['--clear-cache: no layer metadata and no SBOM from the previous build', true],
  ])('%s', async (_what, clearCache) => {
    const r = { buildpacks: [withSbom()], first: first(), second: second(), clearCache };
    const [ours, ref] = await Promise.all([rebuildViaRbp(r), rebuildViaLifecycle(r)]);
    expect(ref.code, ref.log).toBe(0);
    if (clearCache) expect(ref.observed.restored).not.toMatch(/launchonly|cached|both/);
    else {
      expect(ref.observed.restored).toMatch(/^launchonly\.sbom\.cdx\.json$/m);
      expect(ref.observed.restored).toMatch(/^cached\.sbom\.cdx\.json$/m);
      expect(ref.observed.restored).not.toMatch(/^buildonly\.sbom/m);
    }
    const { log: l1, ...a } = ours;
    const { log: l2, ...b } = ref;
    expect(a, `---- rbp:\n${l1}\n---- lifecycle:\n${l2}`).toEqual(b);
  });
});
