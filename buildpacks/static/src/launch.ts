/** The launch planner of the static runtime: serves the site as the build decided and the launch environment says. */
import { readDecision } from '../../../lib/launch/decision.ts';
import { runPlanner } from '../../../lib/launch/planner.ts';
import { staticLaunch, type StaticDecision } from './server.ts';

// The same launch the build stored a plan of; the decision is read inside the planner's error
// handling, where a missing one is its user error.
void runPlanner(() => staticLaunch(readDecision<StaticDecision>()));
