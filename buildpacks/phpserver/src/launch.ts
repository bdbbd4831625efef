/** bin/launch: starts the application server as the build decided and the run environment says. */
import { readDecision } from '../../../lib/launch/decision.ts';
import { runLaunch } from '../../../lib/launch/entry.ts';
import { phpServerLaunch, type PhpServerDecision } from './command.ts';

// The same launch the build wrote the direct launch script from; the decision is read inside the
// launch's error handling, where a missing one is its user error.
void runLaunch(() => phpServerLaunch(readDecision<PhpServerDecision>()));
