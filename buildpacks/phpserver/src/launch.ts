/** bin/launch: starts the application server as the build decided and the run environment says. */
import { readDecision, runLaunch } from '../../../lib/launch/entry.ts';
import { PICO_REFUSAL } from './instance.ts';
import { PHPSERVER_PORT_VARIABLE, planPhpServer, type PhpServerDecision } from './command.ts';

// The decision is read inside the plan, where a missing one is the launch's user error.
runLaunch({ portVariable: PHPSERVER_PORT_VARIABLE, refusals: [PICO_REFUSAL], plan: (ctx) => planPhpServer(readDecision<PhpServerDecision>(), ctx) });
