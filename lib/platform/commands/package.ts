/** `rbp package` (our buildpackages) and `rbp builder` (a builder with its run, build and lifecycle images). */
import path from 'node:path';
import { noPositionals, str, usage, withScratch, type Handler } from './context.ts';

const packagingModule = () => import('../cli-package.ts');

export const runPackage: Handler = async (ctx) => {
  const { log } = ctx;
  noPositionals(ctx);
  if (!str(ctx, 'out') && !str(ctx, 'publish')) throw usage('rbp package needs --out DIR or --publish REF', ctx.command);
  const { packageOurs, publishPackages } = await packagingModule();
  return await withScratch(str(ctx, 'out'), 'rbp-package-', async (dir) => {
    log.section('Package');
    const files = await log.step(`writing the buildpackages into ${dir}`, () => packageOurs(dir, log));
    if (str(ctx, 'publish')) {
      log.section('Publish');
      await publishPackages(files, str(ctx, 'publish')!, log);
    }
    return 0;
  });
};

export const runBuilder: Handler = async (ctx) => {
  const { log } = ctx;
  noPositionals(ctx);
  if (!str(ctx, 'out') && !str(ctx, 'publish')) throw usage('rbp builder needs --out DIR or --publish REF', ctx.command);
  const { builderInstructions, builderNames, LAYOUT_TAGS, pushImages, referenceLauncher, runImageLayout, writeBuilder } = await packagingModule();
  const lifecycleDir = path.dirname(referenceLauncher());
  const lifecycleVersion = path.basename(lifecycleDir);
  // Names first: a bad one is refused before any work.
  const names = builderNames({ builder: str(ctx, 'publish'), runImageName: str(ctx, 'run-image-name'), lifecycleVersion });
  return await withScratch(str(ctx, 'out'), 'rbp-builder-', async (dir) => {
    log.section('Builder');
    const out = str(ctx, 'out') ? dir : path.join(dir, 'builder');
    await log.step(`writing the builder ${out}`, () =>
      writeBuilder({ out, runImage: runImageLayout(str(ctx, 'run-image')), lifecycleDir, lifecycleVersion, node: process.execPath, names, log }),
    );
    if (str(ctx, 'publish')) {
      log.section('Publish');
      // The builder last: when it is there, what it names is there too.
      const images = (['run', 'build', 'lifecycle', 'builder'] as const).map((k) => ({ layout: out, tag: LAYOUT_TAGS[k], ref: names[k] }));
      await pushImages(images, log);
    } else for (const l of builderInstructions(out, names)) log.info(l);
    return 0;
  });
};
