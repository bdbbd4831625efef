/** bin/launch: starts the application server as the build decided and the run environment says. */
import { readDecision, runLaunch } from '../../../lib/launch/entry.ts';
import { planPhpServer, type PhpServerDecision } from './command.ts';

runLaunch((env) => planPhpServer(readDecision<PhpServerDecision>(), env, process.cwd()));
