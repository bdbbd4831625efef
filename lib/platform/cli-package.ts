/**
 * What `rbp build --image`, `rbp package` and `rbp builder` use, behind one dynamic import in cli.ts:
 * one chunk of the bundle (tar, OCI layouts, the registry client) that no other command loads.
 */
export { prepareAppImage, referenceLauncher, runImageLayout, writeAppImage, type PreparedImage } from '../package/app-image.ts';
export { builderInstructions, builderNames, LAYOUT_TAGS, writeBuilder } from '../package/builder.ts';
export { parseImageRef } from '../package/image-ref.ts';
export { packageOurs, publishPackages } from '../package/ours.ts';
export { pushImages } from '../package/registry.ts';
