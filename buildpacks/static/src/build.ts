import { runBuild } from '../../../lib/cnb/context.ts';
import { installLaunch } from '../../../lib/launch/entry.ts';

runBuild((ctx) => {
  installLaunch(ctx, { runtime: 'static', webroot: ctx.env.CC_WEBROOT ?? '/' });
});
