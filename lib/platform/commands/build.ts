/** `rbp build APP --out OUT` and `rbp deploy APP`: build (and an app image), then for deploy start it and check it. */
import path from 'node:path';
import { EXIT } from '../../cnb/exit.ts';
import { errorJson, UserError } from '../../errors.ts';
import { DEFAULT_INSTANCE, INSTANCE_SIZES, parseInstance } from '../../launch/instance.ts';
import { restartPolicy } from '../../launch/restart.ts';
import type { PreparedImage } from '../../package/app-image.ts';
import { collectEnv } from '../cli-env.ts';
import { buildJson, writeJson } from '../cli-json.ts';
import { RUNTIMES } from '../../package/our-buildpacks.ts';
import { readProjectDescriptor } from '../project-descriptor.ts';
import { defaultDeployOut } from '../rbp-dirs.ts';
import { list, one, orderOf, parsePort, parseTimeout, str, usage, type Handler } from './context.ts';

// The packaging code (tar, OCI layouts, the registry client) loads only when a command uses it.
const packagingModule = () => import('../cli-package.ts');

export const run: Handler = async (ctx) => {
  const { log, streams, values, name } = ctx;
  const app = one(ctx, 'APP directory');
  const out = str(ctx, 'out') ?? (name === 'deploy' ? defaultDeployOut(app) : undefined);
  if (!out) throw usage('rbp build needs --out OUT', ctx.command);
  const instance = parseInstance(str(ctx, 'instance') ?? DEFAULT_INSTANCE);
  const project = readProjectDescriptor(app, str(ctx, 'descriptor'), log);
  const userEnv = collectEnv(list(ctx, 'env-file'), list(ctx, 'env'), project?.env);
  const port = parsePort(str(ctx, 'port'));
  const timeoutMs = parseTimeout(str(ctx, 'timeout')) * 1000;
  const restart = restartPolicy(str(ctx, 'restart') ?? 'on-failure', '--restart');
  const tags = imageTags(list(ctx, 'tag'), str(ctx, 'image'));
  const order = await orderOf(ctx, project);
  // --image DIR writes an OCI layout; --image REF --publish pushes to a registry (the layout
  // then lives beside OUT, in OUT.rbp-image, so that the next build reuses its layers).
  const imageArg = str(ctx, 'image');
  if (values.publish && !imageArg) throw usage('--publish goes with --image REF, the name the image is pushed to', ctx.command);
  // A bad name is refused before any work.
  const imageRef = values.publish ? (await packagingModule()).parseImageRef(imageArg!, '--image', { push: true }) : undefined;
  const imageDir = imageArg ? (imageRef ? `${path.resolve(out)}.rbp-image` : path.resolve(imageArg)) : undefined;
  let prepared: PreparedImage | undefined;
  const writeImage = async () => {
    log.section('Image');
    const { prepareAppImage, pushImages, referenceLauncher, runImageLayout } = await packagingModule();
    prepared = await log.step(`writing the app image ${imageDir}`, () =>
      prepareAppImage({ out, image: imageDir!, tags, runImage: runImageLayout(str(ctx, 'run-image')), launcher: referenceLauncher(), log }),
    );
    if (imageRef) await pushImages([{ layout: prepared.staged, tag: tags?.[0] ?? 'latest', ref: imageRef }], log);
  };
  const { build } = await import('../build.ts');
  const r = await build({
    appDir: app,
    outDir: out,
    order,
    cacheDir: str(ctx, 'cache'),
    clearCache: Boolean(values['clear-cache']),
    userEnv,
    bindings: list(ctx, 'binding'),
    task: str(ctx, 'task'),
    ...(project?.filter ? { appFilter: project.filter } : {}),
    instance,
    instanceMemory: INSTANCE_SIZES[instance]!,
    forImage: Boolean(imageArg),
    ...(imageDir ? { beforeCommit: writeImage } : {}),
    // A deploy reuses the build OUT holds when nothing changed (build-reuse.ts), unless told to build.
    ...(name === 'deploy' ? { reuse: { check: !values.rebuild } } : {}),
    log,
  });
  if (r.code !== 0) log.flushHeld();
  let image: string | undefined;
  if (prepared && r.code === 0) {
    prepared.commit();
    image = imageRef ? imageArg : imageDir;
  } else prepared?.abort();
  const result = buildJson(r, out, image);
  if (r.code !== 0 || name === 'build') {
    if (values.json) writeJson(streams.stdout, result);
    return r.code;
  }
  const { deploy } = await import('../deploy.ts');
  const appOut = values.json ? streams.stderr : streams.stdout;
  return await deploy({ out, port, userEnv, instance, restart, check: Boolean(values.check), timeoutMs, log, appOut, appErr: streams.stderr }, (d) => {
    if (values.json)
      writeJson(streams.stdout, {
        ...result,
        exitCode: d.error ? EXIT.healthCheckFailed : 0,
        deploy: { deployed: d.deployed, url: d.url, process: d.process, healthCheck: d.healthCheck },
        ...(d.error ? { error: errorJson(d.error) } : {}),
      });
  });
};

/** `--tag` values: ref names of the --image in its layout (OCI image-layout's ref.name grammar). */
function imageTags(tags: string[] | undefined, image: string | undefined): string[] | undefined {
  if (!tags?.length) return undefined;
  if (!image) {
    const type = tags.find((t) => (RUNTIMES as readonly string[]).includes(t));
    throw new UserError({
      id: 'platform/tag/no-image',
      title: '--tag names an image, and no --image is written',
      seen: { what: '--tag', value: tags.join(' ') },
      rule: '-t/--tag is a name of the app image rbp build --image DIR writes, as pack build --tag.',
      fix: type ? `For the runtime, write --type ${type} (-t is --tag, as in pack). For an image, add --image DIR.` : 'Add --image DIR, or leave --tag out.',
    });
  }
  const component = '[A-Za-z0-9]+(?:(?:[-._:@+]|--)[A-Za-z0-9]+)*';
  const bad = tags.find((t) => !new RegExp(`^${component}(?:/${component})*$`).test(t));
  if (bad !== undefined) {
    throw new UserError({
      id: 'platform/tag/invalid',
      title: 'Invalid image tag',
      seen: { what: '--tag', value: bad },
      rule: 'A tag is letters and digits, separated by one of - . _ : @ + (or --), with / between parts: myapp, myapp:1.2, registry.example.com/team/myapp:latest.',
      fix: 'Write the tag without spaces or other characters, e.g. --tag myapp:1.2.',
    });
  }
  return tags;
}
