/**
 * Our three buildpacks' detect functions, compiled into rbp's own bundles (scripts/build.mjs), and
 * the id of the build that made them. rbp runs one of these in place of a buildpack folder's detect
 * only when that folder's lib/detect.cjs says it came from the same build (lib/platform/detect.ts):
 * the code is then the same, and rbp spares reading and compiling the folder's own copy (and its
 * copies of lib/ and smol-toml), ~3 ms per buildpack on every detect.
 */
import type { DetectFn } from '../cnb/context.ts';
import nodeDetect from '../../buildpacks/node/src/detect.ts';
import phpserverDetect from '../../buildpacks/phpserver/src/detect.ts';
import staticDetect from '../../buildpacks/static/src/detect.ts';
import type { Runtime } from './order.ts';

declare const __RBP_BUILD_ID__: string | undefined;

/** The build id scripts/build.mjs gave this rbp and the buildpacks it built; none when rbp runs from source. */
export const BUILD_ID: string | undefined = typeof __RBP_BUILD_ID__ === 'string' ? __RBP_BUILD_ID__ : undefined;

export const OUR_DETECTS: Readonly<Record<Runtime, DetectFn>> = { node: nodeDetect, static: staticDetect, phpserver: phpserverDetect };
