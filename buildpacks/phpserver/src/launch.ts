/** The launch planner of the phpserver runtime: starts the application server as the build decided and the launch environment says. */
import { readDecision } from '../../../lib/launch/decision.ts';
import { runPlanner } from '../../../lib/launch/planner.ts';
import { phpServerLaunch, type PhpServerDecision } from './command.ts';

// The same launch the build stored a plan of; the decision is read inside the planner's error
// handling, where a missing one is its user error.
void runPlanner(() => phpServerLaunch(readDecision<PhpServerDecision>()));
