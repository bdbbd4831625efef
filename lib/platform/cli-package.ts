/**
 * What `rbp build --image`, `rbp package` and `rbp builder` use, behind one dynamic import in cli.ts:
 * one chunk of the bundle (tar, OCI layouts) that no other command loads.
 */
export { referenceLauncher, runImageLayout, writeAppImage } from '../package/app-image.ts';
export { writeBuilder } from '../package/builder.ts';
export { packageOurs } from '../package/ours.ts';
