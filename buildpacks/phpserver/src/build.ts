import { runBuild } from '../../../lib/cnb/context.ts';
import { installLaunch } from '../../../lib/launch/entry.ts';

runBuild((ctx) => {
  installLaunch(ctx, { runtime: 'phpserver', webroot: ctx.env.CC_WEBROOT ?? '/' });
});
