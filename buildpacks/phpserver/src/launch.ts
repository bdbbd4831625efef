import path from 'node:path';
import { readDecision, runLaunch } from '../../../lib/launch/entry.ts';

runLaunch((env) => {
  const d = readDecision<{ runtime: string; webroot: string }>();
  const port = env.CC_PHPSERVER_PORT ?? env.PORT ?? '8080';
  const root = path.join(process.cwd(), d.webroot);
  return { argv: [env.RBP_TOOL_FRANKENPHP ?? 'frankenphp', 'php-server', '--root', root, '--listen', `0.0.0.0:${port}`], env: {}, facts: { runtime: 'phpserver', port } };
});
